import type { Clock } from '../../lib/clock.js';
import { KeyedGroupCommit } from '../../lib/group-commit.js';
import { msToMicros } from '../../lib/time.js';
import type { Store } from '../../store/store.js';
import type { BillingService } from '../billing/billing.js';
import { Idempotency } from '../common/idempotency.js';
import type { AuthContext } from '../identity/identity.js';
import { admitBatch } from './admission-batch.js';
import type { AdmissionRequest, JobToAdmit } from './admission-batch.js';
import type { CreatedJobView } from '../common/job-view.js';
import { noMeter } from '../common/meter.js';
import type { Meter } from '../common/meter.js';

export type { JobToAdmit } from './admission-batch.js';
export { FULL_RETRY_AFTER_S } from './admission-batch.js';

/** A new job, or the first answer to the same idempotency key (`replayed`). */
export interface CreatedJob {
  readonly job: CreatedJobView;
  readonly replayed: boolean;
}

/** Group commit of creates (config `create_batch`): how many creates one transaction admits at most, and how long an idle server waits for company. */
export interface CreateBatching {
  readonly maxBatch: number;
  readonly windowMs: number;
}

export const DEFAULT_CREATE_BATCHING: CreateBatching = Object.freeze({ maxBatch: 64, windowMs: 0 });

/**
 * Admission, shared by every use case that creates a job (generation, node-app execution): the
 * job is stored in the same transaction that admits it. Its price is held from the available
 * balance (or insufficient_balance), then it is queued or backlogged (or too_many_jobs). A refusal
 * writes nothing. With an idempotency key, the key is taken first (or its stored answer replayed,
 * in flight, reused), its answer is stored in the job's transaction, and a refusal frees it for a
 * retry.
 *
 * Creates that arrive together share one write transaction (group commit, lib/group-commit.ts;
 * the decisions in admission-batch.ts): each is still decided on its own and answered only after
 * the commit that stores it, and the workspace is locked and the commit paid once per batch.
 */
export class JobAdmission {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #idempotency: Idempotency;
  readonly #meter: Meter;
  readonly #batches: KeyedGroupCommit<AdmissionRequest, CreatedJobView>;

  /** `idempotency`: the services' one, with the configured window (default: 24 hours). */
  constructor(
    store: Store,
    clock: Clock,
    billing: BillingService,
    meter: Meter = noMeter,
    idempotency: Idempotency = new Idempotency(store, clock),
    batching: CreateBatching = DEFAULT_CREATE_BATCHING,
  ) {
    this.#store = store;
    this.#meter = meter;
    this.#clock = clock;
    this.#idempotency = idempotency;
    const deps = { billing, idempotency };
    this.#batches = new KeyedGroupCommit(
      (requests) => this.#store.transaction((tx) => admitBatch(tx, requests, deps, msToMicros(this.#clock.nowMs()))),
      batching,
    );
  }

  async admit(auth: AuthContext, job: JobToAdmit, publicUrl: string): Promise<CreatedJob> {
    if (!job.idempotency) return { job: await this.#insert({ auth, job, publicUrl }), replayed: false };
    const begun = await this.#idempotency.begin(auth.workspace.id, {
      ...job.idempotency,
      webhookUrl: job.webhookUrl,
      zeroDataRetention: job.zeroDataRetention,
      tags: job.tags ?? [],
    });
    // The stored answer is the job view as it was created.
    if (begun.kind === 'replay') return { job: begun.body as unknown as CreatedJobView, replayed: true };
    try {
      return { job: await this.#insert({ auth, job, publicUrl, held: begun.held }), replayed: false };
    } catch (err) {
      await this.#idempotency.release(begun.held);
      throw err;
    }
  }

  async #insert(request: AdmissionRequest): Promise<CreatedJobView> {
    // One writer at a time (SQLite): every create shares the next batch. Writers side by side
    // (PostgreSQL): each workspace batches on its own, and batches of different workspaces run at once.
    const key = this.#store.parallelWrites ? request.auth.workspace.id : '';
    const created = await this.#batches.submit(key, request);
    this.#meter.jobCreated(request.job.type);
    return created;
  }
}
