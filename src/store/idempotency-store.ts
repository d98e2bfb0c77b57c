import type { Micros } from '../lib/time.js';

/** `in_flight`: the first request with the key is still running; `done`: its response is stored. */
export type IdempotencyState = 'in_flight' | 'done';

/** One Idempotency-Key of one workspace. */
export interface IdempotencyRecord {
  readonly workspaceId: string;
  readonly key: string;
  /** Random per request that took the key: only that request may finish or free it. */
  readonly attemptId: string;
  /** Fingerprint of the request that took the key (endpoint, body, job-changing headers). */
  readonly requestHash: string;
  readonly endpoint: string;
  readonly state: IdempotencyState;
  /** An in-flight marker older than this belongs to a request that died: the key is free again. */
  readonly leaseUntil: Micros | null;
  readonly jobId: string | null;
  readonly responseStatus: number | null;
  readonly responseBody: Readonly<Record<string, unknown>> | null;
  /** When the first request took the key; the key is kept 24 h from here. */
  readonly createdAt: Micros;
}

export interface NewMarker {
  readonly workspaceId: string;
  readonly key: string;
  readonly attemptId: string;
  readonly requestHash: string;
  readonly endpoint: string;
  readonly leaseUntil: Micros;
  readonly now: Micros;
}

export interface StoredResponse {
  readonly workspaceId: string;
  readonly key: string;
  readonly attemptId: string;
  readonly jobId: string;
  readonly status: number;
  readonly body: Readonly<Record<string, unknown>>;
}

/** The Idempotency-Key table. Keys are unique per workspace; the unique index decides races. */
export interface IdempotencyStore {
  /**
   * In one transaction: forgets this key if its row was created at or before `expiredBefore` or is
   * an in-flight marker whose lease ended before `marker.now`; prunes up to `pruneLimit` other rows
   * created at or before `expiredBefore`; then takes the key with an in-flight marker. `claimed`
   * says whether the marker is ours; if not, `record` is the row that holds the key.
   */
  claim(marker: NewMarker, expiredBefore: Micros, pruneLimit: number): Promise<{ claimed: boolean; record: IdempotencyRecord }>;
  /**
   * Turns our in-flight marker into the stored response. Call inside the transaction that creates
   * the job. False (nothing written) when the marker is no longer ours.
   */
  complete(response: StoredResponse): Promise<boolean>;
  /** Frees the key if our in-flight marker still holds it (the request failed). */
  release(workspaceId: string, key: string, attemptId: string): Promise<void>;
  get(workspaceId: string, key: string): Promise<IdempotencyRecord | undefined>;
}
