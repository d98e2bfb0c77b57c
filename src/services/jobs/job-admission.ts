import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { msToMicros } from '../../lib/time.js';
import { DomainError } from '../../domain/error-catalogue.js';
import type { MicroUsd } from '../../domain/money.js';
import type { Store } from '../../store/store.js';
import { admit, lockExisting } from '../common/admission-counts.js';
import { checkAssetInputs } from '../assets/asset-inputs.js';
import type { AssetInput } from '../assets/asset-inputs.js';
import type { BillingService } from '../billing/billing.js';
import { Idempotency } from '../common/idempotency.js';
import type { HeldKey } from '../common/idempotency.js';
import type { AuthContext } from '../identity/identity.js';
import { toCreatedJobView } from '../common/job-view.js';
import type { CreatedJobView } from '../common/job-view.js';
import { noMeter } from '../common/meter.js';
import type { Meter } from '../common/meter.js';

/** Seconds a caller refused with too_many_jobs should wait: about one short job's time. */
export const FULL_RETRY_AFTER_S = 5;

const tooManyJobs = () =>
  new DomainError(
    'too_many_jobs',
    'too many jobs: the workspace is running its maximum number of concurrent jobs and its backlog is full; retry later',
    { retryAfterSeconds: FULL_RETRY_AFTER_S },
  );

/** A new job, or the first answer to the same idempotency key (`replayed`). */
export interface CreatedJob {
  readonly job: CreatedJobView;
  readonly replayed: boolean;
}

/** A job that passed every check of its use case, about to be admitted. */
export interface JobToAdmit {
  /** The job's `type`: a model path, or `node-app/<slug>`. */
  readonly type: string;
  /** What the worker runs: a validated body, or a node-app plan. */
  readonly request: Readonly<Record<string, unknown>>;
  /** Held from the available balance at admission. */
  readonly price: MicroUsd;
  readonly webhookUrl: string | null;
  readonly zeroDataRetention: boolean;
  /** URLs of the request that name this workspace's assets: checked again under the workspace lock. */
  readonly assets: readonly AssetInput[];
  /** With an Idempotency-Key: the key, the endpoint and the body its fingerprint covers. */
  readonly idempotency: { readonly key: string; readonly endpoint: string; readonly body: unknown } | null;
  /** The creating request's id (X-Request-Id), stored with the job. */
  readonly requestId?: string | null;
}

/**
 * Admission, shared by every use case that creates a job (generation, node-app execution): the
 * job is stored in the same transaction that admits it. Its price is held from the available
 * balance (or insufficient_balance), then it is queued or backlogged (or too_many_jobs). A refusal
 * rolls everything back. With an idempotency key, the key is taken first (or its stored answer
 * replayed, in flight, reused), its answer is stored in the job's transaction, and a refusal frees
 * it for a retry.
 */
export class JobAdmission {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #billing: BillingService;
  readonly #idempotency: Idempotency;
  readonly #meter: Meter;

  /** `idempotency`: the services' one, with the configured window (default: 24 hours). */
  constructor(store: Store, clock: Clock, billing: BillingService, meter: Meter = noMeter, idempotency: Idempotency = new Idempotency(store, clock)) {
    this.#store = store;
    this.#meter = meter;
    this.#clock = clock;
    this.#billing = billing;
    this.#idempotency = idempotency;
  }

  async admit(auth: AuthContext, job: JobToAdmit, publicUrl: string): Promise<CreatedJob> {
    if (!job.idempotency) return { job: await this.#insert(auth, job, publicUrl), replayed: false };
    const begun = await this.#idempotency.begin(auth.workspace.id, {
      ...job.idempotency,
      webhookUrl: job.webhookUrl,
      zeroDataRetention: job.zeroDataRetention,
    });
    // The stored answer is the job view as it was created.
    if (begun.kind === 'replay') return { job: begun.body as unknown as CreatedJobView, replayed: true };
    try {
      return { job: await this.#insert(auth, job, publicUrl, begun.held), replayed: false };
    } catch (err) {
      await this.#idempotency.release(begun.held);
      throw err;
    }
  }

  async #insert(auth: AuthContext, job: JobToAdmit, publicUrl: string, held?: HeldKey): Promise<CreatedJobView> {
    const now = msToMicros(this.#clock.nowMs());
    const id = newId();
    const created = await this.#store.transaction(async (tx) => {
      const lock = await lockExisting(tx, auth.workspace.id);
      // Again under the lock an asset's DELETE takes: a job is stored only while its assets live.
      if (job.assets.length > 0) await checkAssetInputs(tx.assets, auth.workspace.id, job.assets, publicUrl);
      await this.#billing.hold(tx, lock, { jobId: id, type: job.type, price: job.price }, now);
      const status = await admit(tx, lock, now);
      if (!status) throw tooManyJobs();
      if (status === 'queued') await tx.queue.notify({ kind: 'queued' });
      const inserted = await tx.jobs.insertJob(
        {
          id,
          workspaceId: auth.workspace.id,
          apiUserId: auth.apiUserId,
          type: job.type,
          status,
          request: job.request,
          webhookUrl: job.webhookUrl,
          zeroDataRetention: job.zeroDataRetention,
          createdBy: auth.memberEmail,
          requestId: job.requestId ?? null,
        },
        now,
      );
      const view = toCreatedJobView(inserted);
      if (held) await this.#idempotency.complete(tx, held, inserted.id, view);
      return view;
    });
    this.#meter.jobCreated(job.type);
    return created;
  }
}
