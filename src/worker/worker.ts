import type { ClaimedJob } from '../services/jobs/job-runs.js';
import type { ClaimTypes } from '../store/store.js';
import { INFRA_FAULT_ALERT } from '../lib/infra-fault.js';
import { runJob } from './run-job.js';
import type { RunDeps } from './run-job.js';
import { SlotLoop } from './slot-loop.js';
import type { SlotLoopStopped } from './slot-loop.js';

export interface WorkerOptions {
  /** Jobs this process runs at once. */
  readonly concurrency: number;
  /** The backstop: how often to look for work nobody signalled, expired leases and backlogs. */
  readonly pollMs: number;
  /** The job types it claims; remote-bound models' jobs are left to remote workers. */
  readonly types?: ClaimTypes;
  /**
   * Remote-bound models whose chain spills to this server's engines: path -> spill_after_ms
   * (docs/routing.md). Their jobs are claimed only once they have waited that long in the queue,
   * so the pool keeps them while it has a worker free.
   */
  readonly spill?: ReadonlyMap<string, number>;
  /**
   * Models whose every engine here has a max_in_flight, grouped by those engines, with the places
   * left on them now (docs/routing.md, "Engine limits"). A claim takes no more of a group's jobs
   * than its room: a job claimed past it would only hold a worker slot while it waits, keeping
   * other models' jobs from this worker; left queued, it is claimed once a place frees.
   */
  readonly limited?: {
    readonly groups: () => Promise<readonly { readonly models: readonly string[]; readonly room: number }[]>;
    /** Told of each job claimed, so it counts against its group's room from the claim; the release is called as its run ends. */
    readonly claimed: (jobId: string, model: string) => () => void;
  };
}

/** `types` less `models`; undefined when nothing is left to claim. */
function without(types: ClaimTypes | undefined, models: readonly string[]): ClaimTypes | null | undefined {
  if (models.length === 0) return types;
  if (!types) return { except: models };
  if ('except' in types) return { except: [...types.except, ...models] };
  const only = types.only.filter((t) => !models.includes(t));
  return only.length > 0 ? { only } : null;
}

/** The spilling models by their wait: one claim per distinct spill_after_ms. */
function spillGroups(spill: ReadonlyMap<string, number> | undefined): [number, string[]][] {
  const groups = new Map<number, string[]>();
  for (const [model, ms] of spill ?? []) groups.set(ms, [...(groups.get(ms) ?? []), model]);
  return [...groups];
}

/**
 * A process's job runner: claims jobs while it has free slots, runs each with runJob, and between
 * claims waits for a wake-up (a new job in this process, a freed slot) or the slow poll, which
 * also reaps expired leases and promotes backlogs for every process sharing the store.
 */
export class Worker {
  readonly #deps: RunDeps;
  readonly #loop: SlotLoop<ClaimedJob>;
  /** Releases of the claimed jobs counted against a limited group's room (WorkerOptions.limited), by job id. */
  readonly #unplaced = new Map<string, () => void>();
  /** The data dir could not take writes at the last look: claims are paused. */
  #diskPaused = false;

  constructor(deps: RunDeps, opts: WorkerOptions) {
    this.#deps = deps;
    const { log } = deps;
    const spills = spillGroups(opts.spill);
    this.#loop = new SlotLoop<ClaimedJob>(
      {
        // As many jobs per claim as there are free slots: one statement takes them all.
        claim: async (max) => {
          try {
            const groups = (await opts.limited?.groups()) ?? [];
            const claimed: ClaimedJob[] = [];
            // Limited models first, each group capped by its room, so they keep their turn without taking slots to wait in.
            for (const g of groups) {
              const n = Math.min(g.room, max - claimed.length);
              if (n > 0) claimed.push(...(await deps.runs.claimMany(n, { only: g.models })));
            }
            const limited = groups.flatMap((g) => g.models);
            const types = without(opts.types, limited);
            if (claimed.length < max && types !== null) claimed.push(...(await deps.runs.claimMany(max - claimed.length, types)));
            for (const [waitedMs, models] of spills) {
              const spilling = without({ only: models }, limited);
              if (claimed.length < max && spilling) claimed.push(...(await deps.runs.claimMany(max - claimed.length, spilling, waitedMs)));
            }
            if (opts.limited) for (const job of claimed) this.#unplaced.set(job.id, opts.limited.claimed(job.id, job.type));
            return claimed;
          } catch (err) {
            log.error({ err: { message: (err as Error).message } }, 'claiming a job failed');
            return [];
          }
        },
        run: async (job, hardStop) => {
          try {
            await runJob(job, deps, hardStop);
          } finally {
            this.#unplaced.get(job.id)?.();
            this.#unplaced.delete(job.id);
          }
        },
        failed: (job, err) => log.error({ jobId: job.id, requestId: job.requestId ?? undefined, err: { message: (err as Error).message } }, 'job run failed'),
        mayClaim: () => this.#diskAllowsClaims(),
        maintain: () => this.#maintain(),
      },
      { concurrency: opts.concurrency, pollMs: opts.pollMs, clock: deps.clock },
    );
  }

  get running(): number {
    return this.#loop.running;
  }

  start(): void {
    this.#loop.start((poke) => this.#deps.signals.onQueued(poke));
  }

  /**
   * Stops claiming, lets running jobs finish for `graceMs`, then aborts the rest, which hand their
   * jobs back to the queue for another worker (or this one after a restart). Says how many were
   * running and how many of those the grace cut (handed back, unless they ended just then).
   */
  stop(graceMs: number): Promise<SlotLoopStopped> {
    return this.#loop.stop({ graceMs });
  }

  /**
   * Claims nothing while the data dir cannot take writes: the job would only fault, and waiting in
   * the queue costs it neither an attempt nor its timeout (counted from its first claim).
   */
  async #diskAllowsClaims(): Promise<boolean> {
    const ok = (await this.#deps.readiness?.canStore()) ?? true;
    if (ok === !this.#diskPaused) return ok;
    this.#diskPaused = !ok;
    if (ok) this.#deps.log.info({ alert: INFRA_FAULT_ALERT, resolved: true }, 'the data dir takes writes again; claiming jobs');
    else this.#deps.log.error({ alert: INFRA_FAULT_ALERT, kind: 'disk' }, 'the data dir cannot take writes (disk full, read-only or below min_free_disk_bytes); claiming no jobs');
    return ok;
  }

  async #maintain(): Promise<void> {
    try {
      const reaped = await this.#deps.runs.reap();
      if (reaped > 0) this.#deps.log.warn({ jobs: reaped }, 'returned jobs of stopped workers to the queue');
      await this.#deps.runs.promoteAll();
    } catch (err) {
      this.#deps.log.error({ err: { message: (err as Error).message } }, 'lease and backlog maintenance failed');
    }
  }
}
