import type { Clock } from '../lib/clock.js';
import { isUuid, newId } from '../lib/ids.js';
import { formatMicros, msToMicros } from '../lib/time.js';
import type { Micros } from '../lib/time.js';
import type { Store } from '../store/store.js';
import type { CatalogEntry } from './catalog/catalog.js';
import { admit, fillSlots } from './admission.js';
import type { BillingService } from './billing.js';
import type { WebhookService } from './webhooks.js';
import { AppError, notFound } from './errors.js';
import type { AuthContext } from './identity.js';
import { toJobView } from './job-view.js';
import type { JobView } from './job-view.js';
import { NON_TERMINAL_STATUSES } from './states.js';
import type { JobStatus } from './states.js';

/** Seconds a client told 429 should wait: about one short job's time. */
export const FULL_RETRY_AFTER_S = 5;

const tooManyJobs = () =>
  new AppError(
    'too_many_jobs',
    'too many jobs: the workspace is running its maximum number of concurrent jobs and its backlog is full; retry later',
    { headers: { 'Retry-After': String(FULL_RETRY_AFTER_S) } },
  );

/** Where job outputs live; the job service only ever removes them. */
export interface OutputRemover {
  remove(outputKey: string): Promise<void>;
}

export interface JobPage {
  items: JobView[];
  next_cursor: string | null;
}

export interface CreateJob {
  readonly model: CatalogEntry;
  /** Already validated, with defaults applied. */
  readonly request: Readonly<Record<string, unknown>>;
  readonly webhookUrl: string | null;
  readonly zeroDataRetention: boolean;
}

/** A validated GET /jobs query. */
export interface JobListQuery {
  /** Only jobs created strictly before this instant. */
  readonly before?: Micros;
  readonly types?: readonly string[];
  readonly status?: JobStatus;
  readonly limit: number;
}

/** Creating, reading, listing and deleting jobs of the caller's API user. */
export class JobService {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #outputs: OutputRemover;
  readonly #billing: BillingService;
  readonly #webhooks: WebhookService;

  constructor(store: Store, clock: Clock, outputs: OutputRemover, billing: BillingService, webhooks: WebhookService) {
    this.#store = store;
    this.#clock = clock;
    this.#outputs = outputs;
    this.#billing = billing;
    this.#webhooks = webhooks;
  }

  /**
   * Admits the job in the same transaction that stores it: its price is held from the available
   * balance (or 402), then it is queued or backlogged (or 429). A refusal rolls everything back.
   */
  async create(auth: AuthContext, input: CreateJob): Promise<JobView> {
    const now = msToMicros(this.#clock.nowMs());
    const id = newId();
    const price = this.#billing.priceOf(input.model.path, input.request);
    const job = await this.#store.transaction(async (tx) => {
      // Workspace row first, then the balance and job rows: the order every transaction takes.
      const limits = await tx.queue.lockWorkspace(auth.workspace.id);
      if (!limits) throw new Error(`workspace ${auth.workspace.id} vanished`);
      await this.#billing.hold(tx, { workspaceId: auth.workspace.id, jobId: id, type: input.model.path, price }, now);
      const status = await admit(tx, auth.workspace.id, limits, now);
      if (!status) throw tooManyJobs();
      if (status === 'queued') await tx.queue.notify({ kind: 'queued' });
      return tx.jobs.insertJob(
        {
          id,
          workspaceId: auth.workspace.id,
          apiUserId: auth.apiUserId,
          type: input.model.path,
          status,
          request: input.request,
          webhookUrl: input.webhookUrl,
          zeroDataRetention: input.zeroDataRetention,
        },
        now,
      );
    });
    return toJobView(job);
  }

  /** Unknown, malformed and other workspaces' ids are all simply "not found". */
  async get(auth: AuthContext, id: string): Promise<JobView> {
    const job = isUuid(id) ? await this.#store.jobs.getJob(auth.apiUserId, id.toLowerCase()) : undefined;
    if (!job) throw notFound(`job '${id}' not found`);
    return toJobView(job);
  }

  /**
   * Deletes the job and its outputs. A job still in progress is cancelled first, in the same
   * transaction: its status becomes `cancelled` (what a webhook will report), its worker is told
   * to abort, and its concurrency slot goes to the next backlogged job.
   */
  async delete(auth: AuthContext, id: string): Promise<{ job_id: string; deleted: true }> {
    const job = isUuid(id) ? await this.#store.jobs.getJob(auth.apiUserId, id.toLowerCase()) : undefined;
    if (!job) throw notFound(`job '${id}' not found`);
    const now = msToMicros(this.#clock.nowMs());
    const { deleted, stopped } = await this.#store.transaction(async (tx) => {
      // Workspace row first, then job rows: the order every admission transaction takes them in.
      const limits = await tx.queue.lockWorkspace(job.workspaceId);
      const stopped = await tx.queue.moveJob({
        id: job.id,
        from: NON_TERMINAL_STATUSES,
        to: 'cancelled',
        patch: { completedAt: now, clearLease: true, eraseRequest: job.zeroDataRetention },
        now,
      });
      if (stopped) {
        await this.#billing.settle(tx, job.id, 'cancelled', now);
        await this.#webhooks.enqueue(tx, stopped, now);
        await tx.queue.notify({ kind: 'cancelled', jobId: job.id });
      }
      const gone = await tx.jobs.deleteJob(auth.apiUserId, job.id);
      if (stopped && limits) await fillSlots(tx, job.workspaceId, limits, now);
      return { deleted: gone, stopped };
    });
    if (!deleted) throw notFound(`job '${id}' not found`);
    // A claim between the read above and the cancel may just have given the job its key.
    const outputKey = stopped?.outputKey ?? job.outputKey;
    if (outputKey) await this.#outputs.remove(outputKey);
    return { job_id: job.id, deleted: true };
  }

  async list(auth: AuthContext, query: JobListQuery): Promise<JobPage> {
    // One extra row tells whether another page exists, so the last page says null.
    const rows = await this.#store.jobs.listJobs({ apiUserId: auth.apiUserId, ...query, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    return {
      items: page.map(toJobView),
      next_cursor: rows.length > query.limit ? formatMicros(page[page.length - 1]!.createdAt) : null,
    };
  }
}
