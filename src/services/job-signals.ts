import { EventEmitter } from 'node:events';
import type { JobEvent } from '../store/store.js';

/**
 * In-process wake-ups between the API and the workers of one process: a new or promoted job wakes
 * the claim loop at once, a cancelled job aborts its run at once, a webhook event wakes the sender.
 * They are fed only by committed store events (`relay`): this process's own (`Store.onEvent`) and,
 * on PostgreSQL, other processes' (LISTEN). Without them the slow poll and the heartbeat find the
 * same changes; these signals only save the wait.
 */
export class JobSignals {
  readonly #events = new EventEmitter();

  constructor() {
    // One listener per worker and per running job: many are expected.
    this.#events.setMaxListeners(0);
  }

  /** A webhook delivery was written to the outbox: the sender can go at once. */
  onWebhook(fn: () => void): () => void {
    this.#events.on('webhook', fn);
    return () => this.#events.off('webhook', fn);
  }

  /** A committed store event, from this process or another. */
  relay(event: JobEvent): void {
    if (event.kind === 'cancelled') this.#events.emit('cancelled', event.jobId);
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
}
