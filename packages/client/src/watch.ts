/**
 * Following a job to its end: the server's event stream (`GET /jobs/{id}/events`) when it has one,
 * reconnecting with `Last-Event-ID` when the connection drops or the server, shutting down, says
 * `event: reconnect` (so nothing is lost or repeated), and
 * polling `GET /jobs/{id}` with backoff when the stream is not available (an older server, or a
 * proxy that buffers or cuts event streams).
 */
import { MediagenError, MediagenNetworkError, errorFromResponse } from './errors.js';
import { backoffMs, sleep } from './http.js';
import type { Transport } from './http.js';
import { SseParser, readEvents } from './sse.js';
import { isTerminal } from './types.js';
import type { Job } from './types.js';

export interface WatchOptions {
  readonly signal?: AbortSignal | undefined;
  /** `false`: poll only, never open the event stream. */
  readonly events?: boolean;
  /** Polling: the first interval (default 500 ms), growing by half each quiet poll up to `maxPollMs`. */
  readonly pollMs?: number;
  /** Polling: the longest interval (default 5000 ms). */
  readonly maxPollMs?: number;
  /**
   * A stream silent this long (not even the server's 15-second heartbeat) is taken as cut and
   * reopened (default 45 000 ms).
   */
  readonly idleTimeoutMs?: number;
}

export interface WaitOptions extends WatchOptions {
  /** Give up waiting after this many seconds and return the job as it is then (not terminal). */
  readonly timeoutSeconds?: number;
  /** Called with the job at each change seen, the first and the last included. */
  readonly onUpdate?: ((job: Job) => void) | undefined;
}

/** Answers of the event stream's URL that mean "no stream here": poll instead. */
const NO_STREAM = new Set([404, 405, 406, 429, 501]);

/** Reconnections in a row without an event before the watch falls back to polling. */
const MAX_STREAM_FAILURES = 5;

/** Before reconnecting on `event: reconnect` when the server sent no `retry:`. */
const RECONNECT_MS = 1000;
/** The shortest wait a server's `retry:` may ask for before a reconnect. */
const MIN_RETRY_MS = 250;
/** Reconnects in a row that brought no news before the watch falls back to polling. */
const MAX_IDLE_RECONNECTS = 60;

/** `reconnect`: the server is shutting down; another process (or its replacement) goes on. */
type StreamOutcome = 'ended' | 'unavailable' | 'dropped' | 'reconnect';

class IdleStream extends Error {
  override readonly name = 'IdleStream';
}

/**
 * The job at each change, from its current state to its terminal status (then the iteration
 * ends). A job deleted meanwhile throws a MediagenError with status 404.
 */
export async function* watchJob(t: Transport, id: string, opts: WatchOptions = {}): AsyncGenerator<Job, void, undefined> {
  const path = `/jobs/${encodeURIComponent(id)}`;
  const signal = opts.signal;
  const parser = new SseParser();
  let last = '';
  const fresh = (job: Job) => {
    const text = JSON.stringify(job);
    if (text === last) return false;
    last = text;
    return true;
  };
  const useEvents = opts.events !== false;
  let failures = 0;
  let reconnects = 0;
  const firstPoll = opts.pollMs ?? 500;
  let poll = firstPoll;

  while (useEvents) {
    let progressed = false;
    const outcome: StreamOutcome = yield* streamOnce(t, id, parser, opts, (job) => {
      progressed = true;
      return fresh(job);
    });
    if (outcome === 'ended') return;
    if (outcome === 'unavailable') break;
    // A server closing is no failure of the stream: reconnect, however often that happens.
    // The server's `retry:` is clamped (a hostile or broken `retry: 0` must not spin the client),
    // and a server that keeps closing streams without news sends the client to polling.
    if (outcome === 'reconnect') {
      failures = 0;
      reconnects = progressed ? 0 : reconnects + 1;
      if (reconnects > MAX_IDLE_RECONNECTS) break;
      await sleep(Math.max(MIN_RETRY_MS, parser.retryMs ?? RECONNECT_MS), signal);
      continue;
    }
    reconnects = 0;
    failures = progressed ? 1 : failures + 1;
    if (failures > MAX_STREAM_FAILURES) break;
    // Real failures back off exponentially; the server's `retry:` is for its reconnect events.
    await sleep(backoffMs(failures - 1, 5000), signal);
  }

  for (;;) {
    const { body: job } = await t.json<Job>({ method: 'GET', path, signal });
    if (fresh(job)) {
      yield job;
      poll = firstPoll;
    }
    if (isTerminal(job.status)) return;
    await sleep(poll, signal);
    poll = Math.min(opts.maxPollMs ?? 5000, Math.round(poll * 1.5));
  }
}

/** One connection of the event stream: its jobs, then how it ended. */
async function* streamOnce(
  t: Transport,
  id: string,
  parser: SseParser,
  opts: WatchOptions,
  seen: (job: Job) => boolean,
): AsyncGenerator<Job, StreamOutcome, undefined> {
  const path = `/jobs/${encodeURIComponent(id)}`;
  const signal = opts.signal;
  if (signal?.aborted) throw signal.reason;
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => ctl.abort(new IdleStream('the event stream went silent')), opts.idleTimeoutMs ?? 45_000);
  };
  const dropped = (err: unknown): StreamOutcome => {
    if (signal?.aborted) throw signal.reason;
    if (err instanceof MediagenNetworkError || ctl.signal.aborted || err instanceof TypeError) return 'dropped';
    throw err;
  };
  try {
    arm();
    let res: Response;
    try {
      res = await t.send({
        method: 'GET',
        path: `${path}/events`,
        headers: { accept: 'text/event-stream', ...(parser.lastEventId ? { 'last-event-id': parser.lastEventId } : {}) },
        signal: ctl.signal,
        raw: true,
        // A refused stream is not waited for: polling follows the job meanwhile.
        statusRetries: false,
      });
    } catch (err) {
      return dropped(err);
    }
    const isStream = (res.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    if (res.ok && isStream && res.body) {
      try {
        for await (const event of readEvents(res.body, parser, arm)) {
          if (event.event === 'deleted') throw new MediagenError(404, { error: `job '${id}' was deleted` });
          if (event.event === 'reconnect') return 'reconnect';
          if (event.event !== 'status' && event.event !== 'end') continue;
          const job = JSON.parse(event.data) as Job;
          if (seen(job)) yield job;
          if (event.event === 'end' || isTerminal(job.status)) return 'ended';
        }
        return 'dropped';
      } catch (err) {
        if (err instanceof MediagenError || err instanceof SyntaxError) throw err;
        return dropped(err);
      }
    }
    // 503: the server is closing or busy; reconnect later.
    if (res.status === 503) {
      await res.body?.cancel().catch(() => undefined);
      return 'dropped';
    }
    // No stream here: a server without the route, or one that refuses this stream (429: this
    // workspace's streams are all open), or a proxy's answer. Polling takes over.
    if (res.ok || NO_STREAM.has(res.status)) {
      await res.body?.cancel().catch(() => undefined);
      // A 404 is a missing job or a server without the stream, a 204 a job that had already ended
      // at Last-Event-ID: the job's own GET tells.
      if (res.status === 404 || res.status === 204) {
        const { body: job } = await t.json<Job>({ method: 'GET', path, signal });
        if (seen(job)) yield job;
        if (isTerminal(job.status)) return 'ended';
      }
      return 'unavailable';
    }
    throw await errorFromResponse(res);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The job once it reaches a terminal status, or as it is when `timeoutSeconds` runs out (check
 * `isTerminal(job.status)`).
 */
export async function waitForJob(t: Transport, id: string, opts: WaitOptions = {}): Promise<Job> {
  const signal = opts.signal;
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(signal!.reason);
  if (signal?.aborted) throw signal.reason;
  signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer =
    opts.timeoutSeconds === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          ctl.abort(new IdleStream('wait timed out'));
        }, Math.max(0, opts.timeoutSeconds * 1000));
  let last: Job | undefined;
  try {
    for await (const job of watchJob(t, id, { ...opts, signal: ctl.signal })) {
      last = job;
      opts.onUpdate?.(job);
    }
  } catch (err) {
    if (!timedOut || signal?.aborted) throw err;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  return last ?? (await t.json<Job>({ method: 'GET', path: `/jobs/${encodeURIComponent(id)}`, signal })).body;
}
