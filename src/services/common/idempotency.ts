import { createHmac } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { msToMicros } from '../../lib/time.js';
import type { Store, StoreTx } from '../../store/store.js';
import { DomainError } from '../../domain/error-catalogue.js';
import { canonicalJson } from '../../lib/canonical-json.js';

/**
 * Idempotency-Key (Stripe's semantics; IETF draft-ietf-httpapi-idempotency-key-header): a request
 * repeated with the same key gets the first response again instead of a second job. The rules:
 * docs/decisions.md ("Idempotency keys").
 */

/**
 * A key is remembered this long after its first request by default; then it is forgotten and
 * pruned. `idempotency_key_hours` sets it (docs/config.md).
 */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A request that dies while holding a key (a crash) frees it after this long. */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/** Expired keys deleted by each request that takes a key: enough to keep up, bounded per request. */
export const IDEMPOTENCY_PRUNE_BATCH = 100;
/**
 * The store keeps each answer's status beside its body (a column of the key's row); only created
 * jobs are remembered, and their answer is always this one.
 */
const CREATED_STATUS = 200;

/** What a client told idempotency_key_in_flight should wait before trying again. */
export const IN_FLIGHT_RETRY_AFTER_S = 1;

/** What makes two requests "the same": everything that changes the job they create. */
export interface IdempotentRequest {
  readonly key: string;
  /** The route path, e.g. `/generate/image/vendor-a/model-a-2/medium`. */
  readonly endpoint: string;
  /** The parsed body (after validation: aliases renamed, defaults filled in). */
  readonly body: unknown;
  readonly webhookUrl: string | null;
  readonly zeroDataRetention: boolean;
  /** The job's tags, checked and sorted (so their order never matters); absent or empty: none. */
  readonly tags?: readonly string[];
}

/** A key taken by this request: it must be completed in the job's transaction, or released. */
export interface HeldKey {
  readonly workspaceId: string;
  readonly key: string;
  readonly attemptId: string;
}

export type Begun =
  | { readonly kind: 'replay'; readonly body: Readonly<Record<string, unknown>> }
  | { readonly kind: 'held'; readonly held: HeldKey };

/**
 * SHA-256 HMAC of the canonical request, keyed by the attempt's random id (stored beside it): the
 * row proves two requests equal without keeping a digest a prompt could be guessed back from.
 */
export function requestHash(attemptId: string, req: IdempotentRequest): string {
  const canonical = canonicalJson({
    endpoint: req.endpoint,
    body: req.body,
    webhook_url: req.webhookUrl,
    zero_data_retention: req.zeroDataRetention,
    // Only when there are some: a key taken before tags existed still matches its retry without them.
    ...(req.tags && req.tags.length > 0 ? { tags: req.tags } : {}),
  });
  return createHmac('sha256', attemptId).update(canonical, 'utf8').digest('hex');
}

/** How the window reads in a message: `24 hours`, `1 hour`. */
const hoursText = (windowMs: number) => {
  const hours = Math.round(windowMs / 3_600_000);
  return hours === 1 ? '1 hour' : `${hours} hours`;
};

const reused = (windowMs: number) =>
  new DomainError(
    'idempotency_key_reused',
    `this Idempotency-Key was already used in the last ${hoursText(windowMs)} with a different request (endpoint, body, X-Webhook-URL, X-Api-Zero-Data-Retention or X-Mediagen-Tags); send a new key for a new request`,
  );

export const keyInFlight = () =>
  new DomainError('idempotency_key_in_flight', 'a request with this Idempotency-Key is still being processed; retry shortly to get its response', {
    retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_S,
  });

/** Takes, completes and frees keys; the job service calls it around its creation transaction. */
export class Idempotency {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #windowMs: number;

  /** `windowMs`: how long a key is remembered (the config's `idempotency_key_hours`). */
  constructor(store: Store, clock: Clock, windowMs: number = IDEMPOTENCY_WINDOW_MS) {
    this.#store = store;
    this.#clock = clock;
    this.#windowMs = windowMs;
  }

  /** How long a key is remembered after its first request; the retention janitor prunes what is older. */
  get windowMs(): number {
    return this.#windowMs;
  }

  /**
   * Takes the key in its own short transaction, so a concurrent request sees it at once (in flight),
   * or answers from the key's holder: its stored response (a replay), in flight while it runs,
   * reused for a different request.
   */
  async begin(workspaceId: string, req: IdempotentRequest): Promise<Begun> {
    const nowMs = this.#clock.nowMs();
    const attemptId = newId();
    const { claimed, record } = await this.#store.idempotency.claim(
      {
        workspaceId,
        key: req.key,
        attemptId,
        requestHash: requestHash(attemptId, req),
        endpoint: req.endpoint,
        leaseUntil: msToMicros(nowMs + IDEMPOTENCY_LEASE_MS),
        now: msToMicros(nowMs),
      },
      msToMicros(nowMs - this.#windowMs),
      IDEMPOTENCY_PRUNE_BATCH,
    );
    if (claimed) return { kind: 'held', held: { workspaceId, key: req.key, attemptId } };
    if (record.endpoint !== req.endpoint || record.requestHash !== requestHash(record.attemptId, req)) throw reused(this.#windowMs);
    if (record.state !== 'done' || record.responseStatus === null || record.responseBody === null) throw keyInFlight();
    return { kind: 'replay', body: record.responseBody };
  }

  /**
   * Stores the response with the job, inside its transaction. If the marker is no longer ours
   * (our lease ran out and another request took the key), the job must not be created: in flight.
   */
  async complete(tx: StoreTx, held: HeldKey, jobId: string, body: Readonly<Record<string, unknown>>): Promise<void> {
    if (!(await tx.idempotency.complete({ ...held, jobId, status: CREATED_STATUS, body }))) throw keyInFlight();
  }

  /** The request failed: its key is free for a retry. If this write fails too, the lease frees it. */
  async release(held: HeldKey): Promise<void> {
    await this.#store.idempotency.release(held.workspaceId, held.key, held.attemptId).catch(() => undefined);
  }
}
