import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { PeriodicTask } from '../../lib/periodic-task.js';
import type { OutputEntry, OutputStore } from '../../outputs/output-store.js';
import type { JobStore } from '../../store/store.js';

/**
 * Directories changed less than this long ago are left alone. A claim commits its key before the
 * worker makes the directory, so a listed directory's key is already in the store; the grace is
 * the margin on top (a directory being made, a writer still finishing), not the guarantee.
 */
export const OUTPUT_GRACE_MS = 10 * 60_000;
/** Keys asked about in one store query. */
export const JANITOR_BATCH = 200;

/** What the janitor needs of the output store. */
export type JanitorOutputs = Pick<OutputStore, 'list' | 'removeEntry'>;

export interface JanitorOptions {
  /** Time between sweeps; the first runs at start. */
  readonly intervalMs: number;
  /** Each wait moved by up to ±this fraction of the interval (PeriodicTask); default 0. */
  readonly jitter?: number;
  readonly graceMs?: number;
  readonly batchSize?: number;
}

export interface SweepReport {
  /** Key and trash directories seen. */
  readonly scanned: number;
  /** Trash directories deleted (left by removals that failed). */
  readonly trash: number;
  /** Key directories deleted because no job (or only a failed one) holds their key. */
  readonly orphans: number;
  /** Directories inside the grace period, left for a later sweep. */
  readonly young: number;
  /** Deletions that failed; a later sweep tries again. */
  readonly failed: number;
}

/**
 * Removes output files nothing serves any more: trash left by a removal that failed (a DELETE
 * while the worker was still writing, EBUSY, EACCES...), and directories of keys no job holds (a
 * process that died between deleting a row and removing its files, a late writer after a DELETE,
 * a failed job whose removal failed). The outputs route already refuses such keys; this frees
 * the disk. Several processes may sweep the same root: every removal is idempotent.
 */
export class OutputJanitor {
  readonly #jobs: Pick<JobStore, 'outputKeysInUse'>;
  readonly #outputs: JanitorOutputs;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #graceMs: number;
  readonly #batchSize: number;
  readonly #task: PeriodicTask;

  constructor(jobs: Pick<JobStore, 'outputKeysInUse'>, outputs: JanitorOutputs, clock: Clock, log: Log, opts: JanitorOptions) {
    this.#jobs = jobs;
    this.#outputs = outputs;
    this.#clock = clock;
    this.#log = log;
    this.#graceMs = opts.graceMs ?? OUTPUT_GRACE_MS;
    this.#batchSize = opts.batchSize ?? JANITOR_BATCH;
    this.#task = new PeriodicTask((signal) => this.#sweepAndLog(signal), {
      intervalMs: opts.intervalMs,
      jitter: opts.jitter,
      clock,
      log,
      failureMessage: 'output janitor sweep failed',
    });
  }

  /** Sweeps now, then every interval, until stop(). */
  start(): void {
    this.#task.start();
  }

  /** Ends the loop; a sweep in progress stops at its next directory. */
  async stop(): Promise<void> {
    await this.#task.stop();
  }

  /** One pass over the output store. */
  async sweep(signal: AbortSignal = this.#task.signal): Promise<SweepReport> {
    const counts = { scanned: 0, trash: 0, orphans: 0, young: 0, failed: 0 };
    const now = this.#clock.nowMs();
    let batch: OutputEntry[] = [];
    for await (const entry of this.#outputs.list()) {
      if (signal.aborted) break;
      counts.scanned++;
      if (now - entry.changedMs < this.#graceMs) {
        counts.young++;
      } else if (entry.kind === 'trash') {
        if (await this.#remove(entry)) counts.trash++;
        else counts.failed++;
      } else {
        batch.push(entry);
        if (batch.length >= this.#batchSize) {
          await this.#sweepKeys(batch, counts);
          batch = [];
        }
      }
    }
    if (batch.length > 0 && !signal.aborted) await this.#sweepKeys(batch, counts);
    return counts;
  }

  async #sweepKeys(batch: readonly OutputEntry[], counts: { orphans: number; failed: number }): Promise<void> {
    const inUse = await this.#jobs.outputKeysInUse(batch.map((e) => e.key));
    for (const entry of batch) {
      if (inUse.has(entry.key)) continue;
      if (await this.#remove(entry)) counts.orphans++;
      else counts.failed++;
    }
  }

  async #remove(entry: OutputEntry): Promise<boolean> {
    try {
      await this.#outputs.removeEntry(entry);
      return true;
    } catch (err) {
      // The key is already unservable; the next sweep tries again. No path: it would hold the key.
      const e = err as NodeJS.ErrnoException;
      this.#log.warn({ kind: entry.kind, err: { code: e.code, syscall: e.syscall } }, 'removing output leftovers failed');
      return false;
    }
  }

  /** The loop's tick: a sweep that did something says so; a quiet one logs nothing. */
  async #sweepAndLog(signal: AbortSignal): Promise<void> {
    const report = await this.sweep(signal);
    if (report.trash + report.orphans + report.failed > 0) this.#log.info({ ...report }, 'output janitor swept');
  }
}
