import type { Usage } from '../../domain/usage.js';
import type { Clock } from '../../lib/clock.js';
import { faultRetryDelayMs } from '../../lib/infra-fault.js';
import type { InfraFault } from '../../lib/infra-fault.js';
import { newId } from '../../lib/ids.js';
import { msToMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import { newOutputKey } from '../../outputs/output-store.js';
import type { EngineStage, StyleArtifact, UpstreamState } from '../../engines/engine.js';
import type { Catalog } from '../../models/catalog.js';
import { mainOutputTypes } from '../../models/model.js';
import type { ClaimTypes, JobPatch, JobRecord, Store } from '../../store/store.js';
import { lockExisting, promote } from '../common/admission-counts.js';
import { SharedWrites } from '../common/shared-writes.js';
import type { BillingService } from '../billing/billing.js';
import { JobLost, endJob, serverUnavailableError, timeoutError } from './job-end.js';
import type { EndedJob, JobEnding, JobError } from './job-end.js';
import { HELD, lost, lostWhy, refused } from './run-outcomes.js';
import type { Ended, Held, Lost, Moved, Requeued, Stale } from './run-outcomes.js';
import type { WebhookService } from '../webhooks/webhooks.js';
import { noMeter } from '../common/meter.js';
import type { Meter } from '../common/meter.js';
import { assertMove } from '../../domain/states.js';
import type { JobStatus, MoveInto } from '../../domain/states.js';

export type { JobError } from './job-end.js';
export { serverUnavailableError, timeoutError };
export type { Ended, Held, Lost, LostWhy, Moved, Requeued, Stale } from './run-outcomes.js';

/** A job a worker holds: its lease id and output key are set. */
export type ClaimedJob = JobRecord & { readonly leaseId: string; readonly outputKey: string; readonly startedAt: Micros };

/** The move each engine stage makes; the compiler checks each lands on its stage. */
const STAGE_MOVES: { readonly [S in EngineStage]: MoveInto<S> } = Object.freeze({
  processing: 'start',
  sampling: 'markSampling',
  'intermediate-complete': 'markIntermediate',
});

export interface RunPolicy {
  /** How long a claim lasts without a heartbeat. */
  readonly leaseMs: number;
  /** Claims after which a job whose worker keeps disappearing fails with `worker_lost`. */
  readonly maxAttempts: number;
  /** Infrastructure-fault hand-backs a job gets; the next fault fails it with `server_unavailable`. */
  readonly maxFaultRetries: number;
  /**
   * A job's timeout, counted from its first claim: its model's, or for a node-app job (whose
   * `request` is its plan) what its graph's steps are given.
   */
  timeoutMs(type: string, request?: Readonly<Record<string, unknown>>): number;
  /** A job is claimed only once it has been `queued` this long (sandbox mode: docs/sandbox.md); absent: at once. */
  readonly minQueuedMs?: number;
}

/**
 * The job runner's side of the state machine. Every move is a named move of domain/states.ts,
 * written as one guarded UPDATE that also requires the worker's lease, so a worker that lost its
 * job (cancelled, reaped, deleted) can never move it again. A job's end is `endJob`. Each move
 * answers what it did (run-outcomes.ts): a refused one says why, from the row the refusing
 * transaction saw, so no runner reads the job back to learn what its own move did.
 */
export class JobRuns {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #billing: BillingService;
  readonly #webhooks: WebhookService;
  readonly #catalog: Pick<Catalog, 'get'>;
  readonly #meter: Meter;
  /** The moves of runs and their ends, in transactions shared by the jobs of a workspace (group commit). */
  readonly #writes: SharedWrites;
  readonly policy: RunPolicy;

  constructor(
    store: Store,
    clock: Clock,
    policy: RunPolicy,
    billing: BillingService,
    webhooks: WebhookService,
    catalog: Pick<Catalog, 'get'>,
    meter: Meter = noMeter,
    writes: SharedWrites = new SharedWrites(store),
  ) {
    this.#store = store;
    this.#writes = writes;
    this.#meter = meter;
    this.#catalog = catalog;
    this.#clock = clock;
    this.policy = policy;
    this.#billing = billing;
    this.#webhooks = webhooks;
  }

  #now(): Micros {
    return msToMicros(this.#clock.nowMs());
  }

  /**
   * Whether a run of this job type must report a style artifact (its model's `makesStyle`). Any
   * other run must not: a style comes only from the model that trains one (a node-app job's never).
   */
  makesStyle(type: string): boolean {
    return this.#catalog.get(type)?.makesStyle === true;
  }

  /** The media types the main output of a job of `type` may have; undefined for a type that is no model. */
  mainOutputTypes(type: string): readonly string[] | undefined {
    const entry = this.#catalog.get(type);
    return entry && mainOutputTypes(entry);
  }

  /** The job's deadline: its first claim plus its model's timeout. */
  deadline(job: ClaimedJob): Micros {
    return job.startedAt + this.policy.timeoutMs(job.type, job.request) * 1000;
  }

  /** Claims the oldest claimable job of `types` (all types when absent). */
  async claim(types?: ClaimTypes): Promise<ClaimedJob | undefined> {
    return (await this.claimMany(1, types))[0];
  }

  /** Claims up to `max` of the oldest claimable jobs of `types`, oldest first, in one statement; `waitedMs`: only jobs queued at least that long (a spill, docs/routing.md). */
  async claimMany(max: number, types?: ClaimTypes, waitedMs = 0): Promise<ClaimedJob[]> {
    const now = this.#now();
    const minQueuedMs = Math.max(this.policy.minQueuedMs ?? 0, waitedMs);
    const jobs = await this.#store.queue.claimMany({
      leases: Array.from({ length: max }, () => ({ leaseId: newId(), outputKey: newOutputKey() })),
      leaseExpiresAt: now + this.policy.leaseMs * 1000,
      now,
      ...(types ? { types } : {}),
      ...(minQueuedMs ? { queuedBefore: now - minQueuedMs * 1000 } : {}),
    });
    // Dispatch latency is the wait before a job's first claim: only the claim that set started_at
    // (a later one keeps it) reports it. Not `attempts === 1`: a shutdown hand-back uncounts the
    // attempt, so that test would see every claim after a rolling restart as a first one.
    for (const job of jobs) if (job.startedAt === now) this.#meter.jobClaimed(job);
    return jobs as ClaimedJob[];
  }

  /**
   * Renews the run's lease (with its progress). A lease never comes back once lost (each claim
   * makes a new one), so the row read after a refusal says why it was lost.
   */
  async heartbeat(job: ClaimedJob, progress?: number): Promise<Held | Lost> {
    if (await this.#store.queue.extendLease(job.id, job.leaseId, this.leaseEnd(), progress)) return HELD;
    return this.#lostNow(job);
  }

  /** What an earlier run of the job stored of its work held elsewhere (a provider's job, a ComfyUI prompt); undefined: none. */
  async upstreamOf(job: ClaimedJob): Promise<UpstreamState | undefined> {
    const rec = await this.#store.upstreams.find(job.id);
    return rec && { engine: rec.engine, id: rec.id, state: rec.state };
  }

  /** Stores the run's work held elsewhere with its job while the run holds the lease. */
  async saveUpstream(job: ClaimedJob, state: UpstreamState): Promise<Held | Lost> {
    if (await this.#store.upstreams.save({ jobId: job.id, ...state, updatedAt: this.#now() }, job.leaseId)) return HELD;
    return this.#lostNow(job);
  }

  /** After a refused lease write outside a transaction: why the lease is gone (it never comes back). */
  async #lostNow(job: ClaimedJob): Promise<Lost> {
    return lost(lostWhy(await this.#store.queue.findJob(job.id)));
  }

  /** When a lease taken or renewed now runs out. */
  leaseEnd(): Micros {
    return this.#now() + this.policy.leaseMs * 1000;
  }

  /** Moves a running job one engine stage on, from `from`. */
  async advance(job: ClaimedJob, from: JobStatus, stage: EngineStage, patch?: JobPatch): Promise<Moved | Stale | Lost> {
    const name = STAGE_MOVES[stage];
    assertMove(name, from);
    const now = this.#now();
    return this.#writes.run(job.workspaceId, async (tx) => {
      const moved = await tx.queue.move(name, { id: job.id, leaseId: job.leaseId, patch, now });
      return moved ? { kind: 'moved', job: moved } : refused(await tx.queue.findJob(job.id), job.leaseId);
    });
  }

  /**
   * Completes the job. `usage` is what the engine measured of its output: a metered model's job
   * is charged for it (at most its hold); without it, or for a model priced up front, the hold.
   * `style`, a training run's artifact, becomes a style in the same transaction (endJob).
   */
  complete(
    job: ClaimedJob,
    from: JobStatus,
    result: Readonly<Record<string, unknown>>,
    usage?: Usage,
    style?: StyleArtifact,
  ): Promise<Ended | Stale | Lost> {
    assertMove('complete', from);
    const chargeMicros = usage && this.#billing.chargeOf(job.type, job.request, usage);
    return this.#end(job, {
      move: 'complete',
      id: job.id,
      leaseId: job.leaseId,
      result,
      ...(chargeMicros === undefined ? {} : { chargeMicros }),
      ...(style === undefined ? {} : { style }),
    });
  }

  /** Fails the job from whatever running status it is in; its files go. */
  async fail(job: ClaimedJob, error: JobError): Promise<Ended | Lost> {
    const ended = await this.#end(job, { move: 'fail', id: job.id, leaseId: job.leaseId, error });
    // A lease that still holds a running job can always fail it: a refusal is a loss.
    return ended.kind === 'stale' ? lost('lease_lost') : ended;
  }

  /**
   * Returns a job to the queue; its preview, if any, is gone with it. `atShutdown`: its worker is
   * stopping gracefully, so this claim is not counted toward `worker_lost` (the job's timeout, from
   * its first claim, still bounds how long it can keep being handed back).
   */
  async handBack(job: ClaimedJob, opts: { atShutdown?: boolean } = {}): Promise<Requeued | Lost> {
    const patch = { result: null, ...(opts.atShutdown ? { uncountAttempt: true as const } : {}) };
    return this.#store.transaction(async (tx) => {
      const back = await tx.queue.move('requeue', { id: job.id, leaseId: job.leaseId, patch, now: this.#now() });
      if (!back) return lost(lostWhy(await tx.queue.findJob(job.id)));
      await tx.queue.notify({ kind: 'queued' });
      return { kind: 'requeued' };
    });
  }

  /**
   * An infrastructure fault stopped the run: the job goes back to the queue, unbilled (its hold
   * stays), not to be claimed before its backoff ends. Past its allowance of faults, or when the
   * wait would outlast its timeout, it fails with `server_unavailable` and its hold is released.
   */
  async handBackForFault(job: ClaimedJob, fault: InfraFault): Promise<Requeued | Ended | Lost> {
    const faults = job.faultCount + 1;
    const retryInMs = faultRetryDelayMs(faults);
    const now = this.#now();
    if (faults > this.policy.maxFaultRetries || now + retryInMs * 1000 >= this.deadline(job)) return this.fail(job, serverUnavailableError(fault));
    // No wake-up: nobody may claim it before its backoff ends; the workers' poll finds it then.
    return this.#store.transaction(async (tx) => {
      const patch = { result: null, faultRetryAt: now + retryInMs * 1000 };
      const back = await tx.queue.move('requeue', { id: job.id, leaseId: job.leaseId, patch, now });
      return back ? { kind: 'requeued', retryInMs } : lost(lostWhy(await tx.queue.findJob(job.id)));
    });
  }

  /**
   * The worker gave up on the job but says another attempt may succeed (a remote worker's
   * retryable failure): back to the queue while it has claims left, else failed with `error`.
   */
  retryOrFail(job: ClaimedJob, error: JobError): Promise<Requeued | Ended | Lost> {
    return job.attempts - job.faultCount < this.policy.maxAttempts ? this.handBack(job) : this.fail(job, error);
  }

  /**
   * Fails a queued job nobody claimed in time (remote maintenance: no remote worker took it). Its
   * hold is released like any failure's. Undefined when it was no longer queued, or (with
   * `unchangedSince`) its status changed after that instant: claimed and requeued meanwhile.
   */
  async expire(job: JobRecord, error: JobError, unchangedSince?: Micros): Promise<EndedJob | undefined> {
    const ended = await this.#end(job, { move: 'expire', id: job.id, error, ...(unchangedSince === undefined ? {} : { unchangedSince }) });
    return ended.kind === 'ended' ? ended.job : undefined;
  }

  /** The job as it is now, whoever holds it. */
  find(id: string): Promise<JobRecord | undefined> {
    return this.#store.queue.findJob(id);
  }

  /**
   * Returns jobs whose worker stopped heartbeating to the queue, or fails them when they are past
   * their timeout or have used up their attempts. Returns how many it moved; `onMoved` hears of
   * each, with the error it failed with (none: requeued).
   */
  async reap(limit = 100, onMoved?: (job: JobRecord, error?: JobError) => void): Promise<number> {
    const now = this.#now();
    let moved = 0;
    for (const job of await this.#store.queue.expiredLeases(now, limit)) {
      const claimed = job as ClaimedJob;
      let error: JobError | undefined;
      if (now >= this.deadline(claimed)) {
        error = timeoutError(this.policy.timeoutMs(job.type, job.request));
      } else if (job.attempts - job.faultCount >= this.policy.maxAttempts) {
        // Claims that ended in a fault hand-back were not lost workers: they do not count here.
        error = { code: 'worker_lost', message: `the job's worker stopped ${job.attempts - job.faultCount} times; giving up` };
      }
      if ((error ? await this.fail(claimed, error) : await this.handBack(claimed)).kind !== 'lost') {
        moved++;
        onMoved?.(job, error);
      }
    }
    return moved;
  }

  /** Fills free slots from backlogs (a finished job does this itself; this is the backstop). */
  async promoteAll(): Promise<number> {
    let moved = 0;
    for (const workspaceId of await this.#store.queue.workspacesWithBacklog()) {
      moved += await this.#store.transaction((tx) => promote(tx, workspaceId, this.#now()));
    }
    return moved;
  }

  async #end(job: Pick<JobRecord, 'workspaceId' | 'leaseId'>, ending: JobEnding): Promise<Ended | Stale | Lost> {
    const now = this.#now();
    const deps = { billing: this.#billing, webhooks: this.#webhooks };
    try {
      const ended = await this.#writes.run(job.workspaceId, async (tx) => endJob(tx, await lockExisting(tx, job.workspaceId), ending, deps, now));
      this.#meter.jobEnded(ended, ended.chargedMicros);
      return { kind: 'ended', job: ended, outputsGo: ended.status !== 'completed' };
    } catch (err) {
      // The worker lost the job (cancelled, reaped): its end rolled back, ledger entry and all.
      if (err instanceof JobLost) return job.leaseId === null ? lost(lostWhy(err.now)) : refused(err.now, job.leaseId);
      throw err;
    }
  }
}
