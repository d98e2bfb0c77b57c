import type { Micros } from '../lib/time.js';

/** Keys whose files a sweep's committed change leaves to be removed from the output store. */
export interface PrunedRows {
  /** Rows changed or deleted. */
  readonly rows: number;
  /** Output keys whose files nothing serves or keeps any more (a style's key is never among them). */
  readonly keys: readonly string[];
}

/** A live asset past its lifetime, to be deleted as `DELETE /assets/{id}` would. */
export interface ExpiredAsset {
  readonly workspaceId: string;
  readonly id: string;
}

/** Where a walk over the tombstones stands: the last one seen, in (deleted_at, id) order. */
export interface TombstoneCursor {
  readonly deletedAt: Micros;
  readonly id: string;
}

/**
 * The retention janitor's queries (services/upkeep/retention.ts). Each call is one short transaction
 * over at most `limit` rows, the oldest first, found by an index seek (migration 0016). On
 * PostgreSQL the rows are taken FOR UPDATE SKIP LOCKED: two janitors pass each other's batches
 * instead of waiting on them, and never both act on one row. Nothing a live job needs is touched:
 * only finished jobs (completed, failed, cancelled) are read, never a job whose webhook delivery
 * is pending, never a tombstone an unfinished job may still read.
 */
export interface RetentionStore {
  /**
   * Expires the outputs of finished jobs that ended at or before `endedBefore` and have not
   * expired yet: their URLs stop being served when this commits. `keys`: their output keys that
   * no style holds (a style keeps its training job's cover, docs/styles.md).
   */
  expireOutputs(endedBefore: Micros, now: Micros, limit: number): Promise<PrunedRows>;
  /**
   * Deletes finished jobs that ended at or before `endedBefore` and whose webhook delivery, if
   * any, is no longer pending (their transitions go with them). `keys`: the output keys of those
   * whose outputs had not expired yet, and that no style holds.
   */
  deleteJobs(endedBefore: Micros, limit: number): Promise<PrunedRows>;
  /** Live assets uploaded at or before `uploadedBefore`, oldest first (a plain read). */
  expiredAssets(uploadedBefore: Micros, limit: number): Promise<ExpiredAsset[]>;
  /**
   * Looks at up to `limit` asset tombstones after `after` in (deleted_at, id) order (null: from
   * the oldest) and
   * deletes those no unfinished job created before their deletion may still read (the tombstone
   * rule no longer holds); `keys`: their files' keys. `last`: where the next batch starts, null
   * when there are no more. A cursor, because held tombstones stay and would block the front.
   */
  deleteFreedTombstones(after: TombstoneCursor | null, limit: number): Promise<PrunedRows & { readonly last: TombstoneCursor | null }>;
  /**
   * Deletes the log of finished webhook deliveries (delivered, gone, refused, exhausted) created
   * at or before `createdBefore`: their attempts, then themselves. Pending ones are never read.
   */
  deleteWebhookLogs(createdBefore: Micros, limit: number): Promise<number>;
  /** Deletes Idempotency-Keys created at or before `createdBefore`. */
  pruneIdempotencyKeys(createdBefore: Micros, limit: number): Promise<number>;
  /**
   * Whether `key` is the output key of a completed job whose outputs expired (its URLs answer
   * 410). A failed or cancelled job's URLs answered 404 from its end and keep doing so.
   */
  outputsExpired(key: string): Promise<boolean>;
}
