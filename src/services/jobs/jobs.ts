// Room services/jobs/: a job's life on the API side: creating one (generation, admission, inputs), reading, listing,
// waiting on, cancelling and deleting it, and the moves its runs make until it ends (job-runs, job-end).
// May import from services/: catalog, assets, styles, billing, webhooks, identity, common; test/unit/layers.test.ts holds the order.
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { isUuid } from '../../lib/ids.js';
import { msToMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import type { OutputStore } from '../../outputs/output-store.js';
import type { Store } from '../../store/store.js';
import type { BillingService } from '../billing/billing.js';
import type { WebhookService } from '../webhooks/webhooks.js';
import { DomainError, invalid, notFound } from '../../domain/error-catalogue.js';
import type { AuthContext } from '../identity/identity.js';
import { toJobView } from '../common/job-view.js';
import type { JobView } from '../common/job-view.js';
import { isTerminal } from '../../domain/states.js';
import type { JobStatus } from '../../domain/states.js';
import { lockExisting } from '../common/admission-counts.js';
import { endJob } from './job-end.js';
import { pageOf } from '../common/paging.js';
import { removeOrLeaveToJanitor } from '../common/removal.js';
import { noMeter } from '../common/meter.js';
import type { Meter } from '../common/meter.js';

/** Where job outputs live; the job service only ever removes them. */
export type OutputRemover = Pick<OutputStore, 'remove'>;

/**
 * Where a removal that failed after the commit is reported: the request's logger, whose lines carry
 * that request's `requestId`; the line names the request that created the job as `jobRequestId`.
 */
export type RemovalLog = Pick<Log, 'warn'>;

const quiet: RemovalLog = { warn: () => undefined };

import type { JobPageView as JobPage } from '../common/job-view.js';

export type { JobPage };

/** A validated GET /jobs query. */
export interface JobListQuery {
  /** Window start on created_at, inclusive. */
  readonly start?: Micros;
  /** Window end on created_at, exclusive. */
  readonly end?: Micros;
  /** Only jobs created strictly before this instant (the previous page's `next_cursor`). */
  readonly before?: Micros;
  readonly types?: readonly string[];
  readonly status?: JobStatus;
  /** Only jobs carrying this tag, already checked by the transport (domain/job-tags.ts). */
  readonly tag?: string;
  readonly limit: number;
}

/** Reading, listing and deleting jobs of the caller's API user (creating them: generation.ts). */
export class JobService {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #outputs: OutputRemover;
  readonly #billing: BillingService;
  readonly #webhooks: WebhookService;
  readonly #meter: Meter;

  constructor(store: Store, clock: Clock, outputs: OutputRemover, billing: BillingService, webhooks: WebhookService, meter: Meter = noMeter) {
    this.#store = store;
    this.#meter = meter;
    this.#clock = clock;
    this.#outputs = outputs;
    this.#billing = billing;
    this.#webhooks = webhooks;
  }

  /** Unknown, malformed and other workspaces' ids are all simply "not found". */
  async get(auth: AuthContext, id: string): Promise<JobView> {
    const job = isUuid(id) ? await this.#store.jobs.getJobSummary(auth.apiUserId, id.toLowerCase()) : undefined;
    if (!job) throw notFound(`job '${id}' not found`);
    return toJobView(job);
  }

  /**
   * Deletes the job and its outputs. One transaction reads the job (after the workspace lock),
   * cancels it if it is still in progress (its status becomes `cancelled`, what a webhook will
   * report; its hold is released; its worker is told to abort; its slot goes to the next
   * backlogged job) and deletes the row. A worker completing at the same time either committed
   * first (the job is deleted completed, charged once) or loses its guarded move and rolls its
   * charge back. Only then are the files removed, with the output key as it was at commit.
   */
  async delete(auth: AuthContext, id: string, log: RemovalLog = quiet): Promise<{ job_id: string; deleted: true }> {
    if (!isUuid(id)) throw notFound(`job '${id}' not found`);
    const jobId = id.toLowerCase();
    const now = msToMicros(this.#clock.nowMs());
    const gone = await this.#store.transaction(async (tx) => {
      // An API user's jobs are all in its workspace, so the job is read only under its lock.
      const lock = await lockExisting(tx, auth.workspace.id);
      const job = await tx.jobs.getJob(auth.apiUserId, jobId);
      if (!job) return undefined;
      // Every end takes the workspace lock, so the job cannot end between that read and this
      // cancel. A claim racing the read may have given the job its key meanwhile: the row the
      // cancel returns (locked until commit) is the one whose key counts.
      const stopped = isTerminal(job.status)
        ? undefined
        : await endJob(tx, lock, { move: 'cancel', id: job.id }, { billing: this.#billing, webhooks: this.#webhooks }, now);
      if (!(await tx.jobs.deleteJob(auth.apiUserId, job.id))) throw new Error(`job ${job.id} vanished under its workspace lock`);
      // Its waiters and event streams learn at once that it is gone.
      await tx.queue.notify({ kind: 'changed', jobId: job.id });
      const ended = stopped ?? job;
      // A training job's style keeps its cover, and so the files under its key (docs/styles.md).
      // Styles are made under this lock too, so none can appear for this job after the read.
      const keptByStyle = ended.outputKey !== null && (await tx.styles.holdsOutputKey(ended.outputKey));
      return { ...ended, keptByStyle, stopped };
    });
    if (!gone) throw notFound(`job '${id}' not found`);
    if (gone.stopped) this.#meter.jobEnded(gone.stopped, null);
    // The job is gone, whatever happens to its files now: the outputs route serves only keys of
    // existing jobs (and styles), and the janitor removes what this removal leaves behind.
    if (gone.outputKey && !gone.keptByStyle) {
      await removeOrLeaveToJanitor(this.#outputs, gone.outputKey, log, { jobId: gone.id, jobRequestId: gone.requestId ?? undefined }, "a deleted job's outputs");
    }
    return { job_id: gone.id, deleted: true };
  }

  /**
   * Cancels a job that has not ended and keeps its record (POST /jobs/{id}/cancel): DELETE's end
   * without the delete. One transaction reads the job under the workspace lock and ends it with
   * the `cancel` move (its hold released, its webhook event written, its worker told to abort, its
   * slot given to the next backlogged job); then its files are removed, as DELETE removes them, so
   * a preview of the run is not served. An ended job is job_ended (409) with its status.
   */
  async cancel(auth: AuthContext, id: string, log: RemovalLog = quiet): Promise<JobView> {
    if (!isUuid(id)) throw notFound(`job '${id}' not found`);
    const jobId = id.toLowerCase();
    const now = msToMicros(this.#clock.nowMs());
    const cancelled = await this.#store.transaction(async (tx) => {
      const lock = await lockExisting(tx, auth.workspace.id);
      const job = await tx.jobs.getJob(auth.apiUserId, jobId);
      if (!job) return undefined;
      if (isTerminal(job.status)) {
        throw new DomainError('job_ended', `job '${id}' has already ended: it is ${job.status}`, { fields: { status: job.status } });
      }
      return endJob(tx, lock, { move: 'cancel', id: job.id }, { billing: this.#billing, webhooks: this.#webhooks }, now);
    });
    if (!cancelled) throw notFound(`job '${id}' not found`);
    this.#meter.jobEnded(cancelled, null);
    if (cancelled.outputKey) {
      await removeOrLeaveToJanitor(this.#outputs, cancelled.outputKey, log, { jobId: cancelled.id, jobRequestId: cancelled.requestId ?? undefined }, "a cancelled job's outputs");
    }
    return toJobView(cancelled);
  }

  /** Whether files under this output key may be served: it belongs to an existing, unfailed job. */
  async outputInUse(outputKey: string): Promise<boolean> {
    return (await this.#store.jobs.jobOutputKeysServed([outputKey])).has(outputKey);
  }

  /** Whether this output key's files expired under the retention policy (its URLs answer 410). */
  outputExpired(outputKey: string): Promise<boolean> {
    return this.#store.retention.outputsExpired(outputKey);
  }

  /** Newest first; `start` and `end` bound created_at (start inclusive, end exclusive), the cursor pages within them. */
  async list(auth: AuthContext, query: JobListQuery): Promise<JobPage> {
    const { start, end, before, types, status, tag, limit } = query;
    if (start !== undefined && end !== undefined && start > end) throw invalid(`query parameter 'start' must not be later than 'end'`);
    const rows = await this.#store.jobs.listJobs({
      apiUserId: auth.apiUserId,
      from: start,
      before: end === undefined || before === undefined ? (end ?? before) : Math.min(end, before),
      types,
      status,
      ...(tag !== undefined ? { tag } : {}),
      limit: limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, limit, (j) => j.createdAt);
    return { items: page.map(toJobView), next_cursor };
  }
}
