import { EventEmitter } from 'node:events';
import type { JobEvent, Store } from '../../store/store.js';

/**
 * In-process wake-ups between the API and the workers of one process: a new or promoted job wakes
 * the claim loop at once, a cancelled job aborts its run at once, a webhook event wakes the sender,
 * a job's status change wakes its waiters (Prefer: wait, SSE). They are fed only by committed store
 * events (`relay`): this process's own (`Store.onEvent`) and other processes' (`hearOthers`).
 * Without them the slow poll and the heartbeat find the same changes; these signals only save the wait.
 */
export class JobSignals {
  readonly #events = new EventEmitter();
  readonly #listen: Store['listen'];
  #others: { users: number; stop: Promise<(() => Promise<void>) | undefined> } | undefined;

  /** `listen`: the store's cross-process events (absent: this process hears only its own). */
  constructor(listen?: Store['listen']) {
    this.#listen = listen;
    // One listener per worker, per running job and per waiter: many are expected.
    this.#events.setMaxListeners(0);
  }

  /**
   * Relays other processes' events here too until the returned function is called: one store
   * subscription (PostgreSQL LISTEN, SQLite's wake socket) however many parts ask, so an event is
   * relayed once. The workers ask at start; the job waiters at their first wait.
   */
  async hearOthers(): Promise<() => Promise<void>> {
    const listen = this.#listen;
    if (!listen) return async () => undefined;
    const others = (this.#others ??= { users: 0, stop: listen((event) => this.relay(event)) });
    others.users++;
    try {
      await others.stop;
    } catch (err) {
      others.users--;
      if (this.#others === others && others.users === 0) this.#others = undefined;
      throw err;
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      if (--others.users > 0) return;
      if (this.#others === others) this.#others = undefined;
      await (await others.stop)?.();
    };
  }

  /** A webhook delivery was written to the outbox: the sender can go at once. */
  onWebhook(fn: () => void): () => void {
    this.#events.on('webhook', fn);
    return () => this.#events.off('webhook', fn);
  }

  /** A committed store event, from this process or another. */
  relay(event: JobEvent): void {
    if (event.kind === 'cancelled') this.#events.emit('cancelled', event.jobId);
    else if (event.kind === 'changed') this.#events.emit(`changed:${event.jobId}`);
    else this.#events.emit(event.kind);
  }

  /** Returns the unsubscribe function. */
  onQueued(fn: () => void): () => void {
    this.#events.on('queued', fn);
    return () => this.#events.off('queued', fn);
  }

  onCancelled(fn: (jobId: string) => void): () => void {
    this.#events.on('cancelled', fn);
    return () => this.#events.off('cancelled', fn);
  }

  /** The job's status changed or it was deleted (in any process sharing the store, while `hearOthers` holds). */
  onChanged(jobId: string, fn: () => void): () => void {
    const name = `changed:${jobId}`;
    this.#events.on(name, fn);
    return () => this.#events.off(name, fn);
  }
}
