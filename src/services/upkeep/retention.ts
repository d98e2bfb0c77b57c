// Room services/upkeep/: what keeps a long-running server healthy without a request: retention of old rows and
// files, the output janitor, readiness, store backups.
// May import from services/: remote and what remote may import; test/unit/layers.test.ts holds the order.
import type { RetentionConfig } from '../../config/config.js';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { PeriodicTask } from '../../lib/periodic-task.js';
import { msToMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import type { OutputStore } from '../../outputs/output-store.js';
import type { PrunedRows, TombstoneCursor } from '../../store/retention-store.js';
import type { Store } from '../../store/store.js';
import { removeOrLeaveToJanitor } from '../common/removal.js';

const DAY_MS = 86_400_000;
/** Rows one statement touches at most: each batch is a short transaction holding few locks. */
export const RETENTION_BATCH = 500;
/**
 * Batches of one kind per sweep at most, so a sweep ends; a backlog larger than this (the first
 * sweep after retention is turned on) is worked off over the following sweeps.
 */
export const RETENTION_MAX_BATCHES = 100;
/**
 * Assets deleted per transaction: each holds the workspace lock job creation waits on, so a batch
 * of 500 in one workspace is cut into short ones.
 */
export const ASSET_GROUP = 25;

/** The lifetimes, as the config gives them: days (0: forever), and the idempotency window. */
export interface RetentionPolicy extends RetentionConfig {
  readonly idempotencyKeyHours: number;
}

export interface RetentionOptions {
  /** Time between sweeps; the first runs at start. */
  readonly intervalMs: number;
  /** Each wait moved by up to ±this fraction of the interval (PeriodicTask); default 0. */
  readonly jitter?: number;
  readonly batchSize?: number;
  readonly maxBatches?: number;
}

/** What one sweep did; the log line carries it (counts only: no keys, ids or prompts). */
export interface RetentionReport {
  /** Finished jobs whose outputs expired (their URLs now answer 410). */
  readonly outputsExpired: number;
  /** Finished jobs deleted (GET /jobs/{id} now answers 404). */
  readonly jobsDeleted: number;
  /** Assets past their lifetime deleted outright, or left as tombstones while a job may read them. */
  readonly assetsDeleted: number;
  readonly assetsTombstoned: number;
  /** Tombstones whose rule no longer holds, deleted with their files. */
  readonly tombstonesDeleted: number;
  /** Finished webhook deliveries deleted with their attempts. */
  readonly webhookLogsDeleted: number;
  readonly idempotencyKeysDeleted: number;
  /** Output keys whose files were handed to the output store for removal. */
  readonly filesRemoved: number;
}

type Counts = { -readonly [K in keyof RetentionReport]: number };

/** The parts of the store the janitor uses. */
export type RetentionStorePort = Pick<Store, 'retention' | 'transaction'>;

/**
 * Prunes what outlived its configured lifetime (docs/operations.md, "Retention"): the outputs
 * and rows of finished jobs, assets, asset tombstones, webhook delivery logs and Idempotency-Keys.
 * Runs in every process with a worker, on the injected clock, in small batches; any number of
 * processes may sweep at once (each batch is taken with SKIP LOCKED on PostgreSQL). Never touches
 * an unfinished job, a job whose webhook delivery is pending, a file a tombstone keeps for a job,
 * or a style. Files go after the rows' commit; a removal that fails is left to the output janitor,
 * which removes the files of keys nothing holds.
 */
export class RetentionJanitor {
  readonly #store: RetentionStorePort;
  readonly #outputs: Pick<OutputStore, 'remove'>;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #policy: RetentionPolicy;
  readonly #batch: number;
  readonly #maxBatches: number;
  readonly #task: PeriodicTask;

  constructor(store: RetentionStorePort, outputs: Pick<OutputStore, 'remove'>, clock: Clock, log: Log, policy: RetentionPolicy, opts: RetentionOptions) {
    this.#store = store;
    this.#outputs = outputs;
    this.#clock = clock;
    this.#log = log;
    this.#policy = policy;
    this.#batch = opts.batchSize ?? RETENTION_BATCH;
    this.#maxBatches = opts.maxBatches ?? RETENTION_MAX_BATCHES;
    this.#task = new PeriodicTask((signal) => this.#sweepAndLog(signal), {
      intervalMs: opts.intervalMs,
      jitter: opts.jitter,
      clock,
      log,
      failureMessage: 'retention janitor sweep failed',
    });
  }

  /** Sweeps now, then every interval, until stop(). */
  start(): void {
    this.#task.start();
  }

  /** Ends the loop; a sweep in progress stops after its current batch. */
  async stop(): Promise<void> {
    await this.#task.stop();
  }

  /** One pass over every lifetime; each kind in batches until none is left (or the batch cap). */
  async sweep(signal: AbortSignal = this.#task.signal): Promise<RetentionReport> {
    const c: Counts = {
      outputsExpired: 0,
      jobsDeleted: 0,
      assetsDeleted: 0,
      assetsTombstoned: 0,
      tombstonesDeleted: 0,
      webhookLogsDeleted: 0,
      idempotencyKeysDeleted: 0,
      filesRemoved: 0,
    };
    const nowMs = this.#clock.nowMs();
    const now = msToMicros(nowMs);
    const before = (days: number): Micros | undefined => (days > 0 ? msToMicros(nowMs - days * DAY_MS) : undefined);
    const { jobDays, outputDays, assetDays, webhookLogDays, idempotencyKeyHours } = this.#policy;
    const jobsBefore = before(jobDays);
    const outputsBefore = before(outputDays);
    const assetsBefore = before(assetDays);
    const logsBefore = before(webhookLogDays);
    // Each phase on its own: one that fails (a table locked, a bad row) is logged by name and the
    // others still run, on this sweep and every later one.
    const phase = async (name: string, run: () => Promise<void>) => {
      try {
        await run();
      } catch (err) {
        this.#log.error({ phase: name, err: { message: (err as Error).message } }, 'retention janitor phase failed');
      }
    };
    // Rows first: a job past both lifetimes goes with its files in one step, not two.
    if (jobsBefore !== undefined) {
      await phase('jobs', async () => {
        c.jobsDeleted = await this.#batches(signal, () => this.#withFiles(this.#store.retention.deleteJobs(jobsBefore, this.#batch), c, "a deleted job's outputs"));
      });
    }
    if (outputsBefore !== undefined) {
      await phase('outputs', async () => {
        c.outputsExpired = await this.#batches(signal, () => this.#withFiles(this.#store.retention.expireOutputs(outputsBefore, now, this.#batch), c, 'expired outputs'));
      });
    }
    if (assetsBefore !== undefined) await phase('assets', () => this.#expireAssets(signal, assetsBefore, now, c));
    // Also when assets live forever: tombstones are what DELETE /assets/{id} left, and would pile up.
    await phase('tombstones', async () => {
      c.tombstonesDeleted = await this.#tombstones(signal, c);
    });
    if (logsBefore !== undefined) {
      await phase('webhook logs', async () => {
        c.webhookLogsDeleted = await this.#batches(signal, () => this.#store.retention.deleteWebhookLogs(logsBefore, this.#batch));
      });
    }
    const keysBefore = msToMicros(nowMs - idempotencyKeyHours * 3_600_000);
    await phase('idempotency keys', async () => {
      c.idempotencyKeysDeleted = await this.#batches(signal, () => this.#store.retention.pruneIdempotencyKeys(keysBefore, this.#batch));
    });
    return c;
  }

  /** Runs `batch` until it comes back short (nothing more is due), the cap, or stop(). */
  async #batches(signal: AbortSignal, batch: () => Promise<number>): Promise<number> {
    let total = 0;
    for (let i = 0; i < this.#maxBatches && !signal.aborted; i++) {
      const n = await batch();
      total += n;
      if (n < this.#batch) break;
    }
    return total;
  }

  /** Every tombstone once per sweep, batch after batch: held ones are passed over, not waited behind. */
  async #tombstones(signal: AbortSignal, c: Counts): Promise<number> {
    let after: TombstoneCursor | null = null;
    let total = 0;
    for (let i = 0; i < this.#maxBatches && !signal.aborted; i++) {
      const batch = await this.#store.retention.deleteFreedTombstones(after, this.#batch);
      total += await this.#withFiles(Promise.resolve(batch), c, "a deleted asset's file");
      if (batch.last === null) break;
      after = batch.last;
    }
    return total;
  }

  /** After the batch's commit: its files go (they are no longer served); returns its row count. */
  async #withFiles(pruned: Promise<PrunedRows>, c: Counts, what: string): Promise<number> {
    const { rows, keys } = await pruned;
    for (const key of keys) await this.#removeFiles(key, c, what);
    return rows;
  }

  /** No key or id in the log line: the key is the URL's only secret. */
  async #removeFiles(key: string, c: Counts, what: string): Promise<void> {
    await removeOrLeaveToJanitor(this.#outputs, key, this.#log, { sweep: 'retention' }, what);
    c.filesRemoved++;
  }

  /**
   * Assets past their lifetime, deleted as DELETE /assets/{id} deletes them: under the workspace
   * lock job creation takes, by the store's one rule (deleted now, or a tombstone while a job
   * created before may read the file). One short transaction per workspace and group of
   * `ASSET_GROUP` assets.
   */
  async #expireAssets(signal: AbortSignal, uploadedBefore: Micros, now: Micros, c: Counts): Promise<void> {
    await this.#batches(signal, async () => {
      const due = await this.#store.retention.expiredAssets(uploadedBefore, this.#batch);
      const byWorkspace = new Map<string, string[]>();
      for (const a of due) byWorkspace.set(a.workspaceId, [...(byWorkspace.get(a.workspaceId) ?? []), a.id]);
      for (const [workspaceId, all] of byWorkspace) {
        for (let i = 0; i < all.length; i += ASSET_GROUP) {
          const gone = await this.#deleteAssets(workspaceId, all.slice(i, i + ASSET_GROUP), now);
          for (const g of gone) {
            if (!g) continue;
            if (g.filesStillNeeded) {
              c.assetsTombstoned++;
              continue;
            }
            c.assetsDeleted++;
            await this.#removeFiles(g.asset.outputKey, c, "an expired asset's file");
          }
        }
      }
      return due.length;
    });
  }

  /**
   * One short transaction under the workspace lock job creation takes. A workspace gone since the
   * pick (its assets went with it) is passed over, not an error that would end the phase.
   */
  async #deleteAssets(workspaceId: string, ids: readonly string[], now: Micros) {
    return this.#store.transaction(async (tx) => {
      if (!(await tx.queue.lockWorkspace(workspaceId))) return [];
      const out = [];
      // Another janitor may have taken one meanwhile: deleteAsset is guarded, so it is skipped.
      for (const id of ids) out.push(await tx.assets.deleteAsset(workspaceId, id, now));
      return out;
    });
  }

  /** The loop's tick: every sweep logs its counts, quiet ones too (docs/operations.md). */
  async #sweepAndLog(signal: AbortSignal): Promise<void> {
    const report = await this.sweep(signal);
    this.#log.info({ ...report }, 'retention janitor swept');
  }
}
