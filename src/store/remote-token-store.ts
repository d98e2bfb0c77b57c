import type { Micros } from '../lib/time.js';

/** A remote worker's credential (docs/workers.md). The secret is never stored, only its hash. */
export interface WorkerToken {
  readonly id: string;
  readonly name: string;
  /** Model glob patterns the token may work on; empty: every remote-bound model. */
  readonly models: readonly string[];
  readonly createdAt: Micros;
  readonly lastUsedAt: Micros | null;
  readonly revokedAt: Micros | null;
}

/** A token found by its hash: the record and the hash (it keys the signatures of input URLs). */
export interface WorkerTokenMatch {
  readonly token: WorkerToken;
  readonly tokenHash: string;
}

export interface NewWorkerToken {
  readonly id: string;
  readonly name: string;
  readonly tokenHash: string;
  readonly models: readonly string[];
  readonly now: Micros;
}

/** One remote worker as its latest claim described it. */
export interface WorkerPresence {
  /** `<token id>:<worker_id>`. */
  readonly id: string;
  readonly tokenId: string;
  /** The worker_id the worker sent. */
  readonly name: string;
  /** The pool its claims ask for; null: any pool. */
  readonly pool: string | null;
  /** The model patterns its claims ask for; empty: all its token allows. */
  readonly models: readonly string[];
  readonly lastSeenAt: Micros;
}

/** A live worker with what its token allows: enough to tell which models it could claim. */
export interface LiveWorker extends WorkerPresence {
  readonly tokenModels: readonly string[];
}

/**
 * Worker tokens, the presence of the workers using them, and the one jobs query readiness needs
 * about remote-bound models (kept here, beside the presence it is compared with).
 */
export interface WorkerTokenStore {
  insert(token: NewWorkerToken): Promise<WorkerToken>;
  /** Every token, revoked ones too, oldest first. */
  list(): Promise<WorkerToken[]>;
  get(id: string): Promise<WorkerToken | undefined>;
  /** The token with this hash, revoked or not; undefined if none has it. */
  findByHash(tokenHash: string): Promise<WorkerTokenMatch | undefined>;
  /** The token and its hash by id, revoked or not (signed input URLs name the token by id). */
  findById(id: string): Promise<WorkerTokenMatch | undefined>;
  /** Revoking twice keeps the first time; undefined when there is no such token. */
  revoke(id: string, now: Micros): Promise<WorkerToken | undefined>;
  /** Records use at `now` unless the last recorded use is later than `notSince`. */
  touch(id: string, now: Micros, notSince: Micros): Promise<void>;
  /** Inserts or rewrites the worker's row. */
  upsertPresence(presence: WorkerPresence): Promise<void>;
  /** Deletes up to `limit` presence rows last seen before `before`, oldest first; returns how many. */
  prunePresence(before: Micros, limit: number): Promise<number>;
  /** Workers seen at or after `since` whose token is not revoked. At most `limit` rows, newest first. */
  livePresence(since: Micros, limit: number): Promise<LiveWorker[]>;
  /** Queued jobs of each of `types` (absent: none), counting no further than `atMost` in all. */
  queuedCounts(types: readonly string[], atMost: number): Promise<Map<string, number>>;
}
