import type { FastifyInstance, FastifyReply } from 'fastify';

/** A request that waits (Prefer: wait, an event stream): its signal, and the call that lets it go. */
export interface Held {
  /** Aborts when the response closes (the client went away) or the server starts closing. */
  readonly signal: AbortSignal;
  /** The server has started closing (SIGTERM): an event stream then ends with `event: reconnect`. */
  readonly serverClosing: boolean;
  /** The response closed before it was sent: the client went away (no answer can reach it). */
  readonly clientGone: boolean;
  release(): void;
}

/** Gives each waiting request its signal. */
export interface HeldRequests {
  hold(reply: FastifyReply): Held;
}

/**
 * Waiting requests end early when their client goes away and when the server starts closing (a
 * wait answers with the job as it is, a stream ends), so a shutdown drains them at once instead of
 * waiting out its grace period for a minute-long wait or an endless stream.
 */
export function heldRequests(app: FastifyInstance): HeldRequests {
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());
  return {
    hold(reply) {
      const held = new AbortController();
      const stop = () => held.abort();
      let gone = false;
      const closed = () => {
        gone = !reply.raw.writableFinished;
        stop();
      };
      // A response's `close` comes when it was sent in full or its connection went away first.
      reply.raw.once('close', closed);
      closing.signal.addEventListener('abort', stop, { once: true });
      if (reply.raw.destroyed) gone = true;
      if (closing.signal.aborted || gone) held.abort();
      return {
        signal: held.signal,
        get serverClosing() {
          return closing.signal.aborted;
        },
        get clientGone() {
          return gone;
        },
        release() {
          reply.raw.off('close', closed);
          closing.signal.removeEventListener('abort', stop);
        },
      };
    },
  };
}
