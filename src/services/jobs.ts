import type { Clock } from '../lib/clock.js';
import { isUuid, newId } from '../lib/ids.js';
import { formatMicros, msToMicros } from '../lib/time.js';
import type { Micros } from '../lib/time.js';
import type { Store } from '../store/store.js';
import type { CatalogEntry } from './catalog/catalog.js';
import { notFound } from './errors.js';
import type { AuthContext } from './identity.js';
import { toJobView } from './job-view.js';
import type { JobView } from './job-view.js';
import { INITIAL_STATUS } from './states.js';
import type { JobStatus } from './states.js';

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

  constructor(store: Store, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  async create(auth: AuthContext, input: CreateJob): Promise<JobView> {
    const job = await this.#store.jobs.insertJob(
      {
        id: newId(),
        workspaceId: auth.workspace.id,
        apiUserId: auth.apiUserId,
        type: input.model.path,
        status: INITIAL_STATUS,
        request: input.request,
        webhookUrl: input.webhookUrl,
        zeroDataRetention: input.zeroDataRetention,
      },
      msToMicros(this.#clock.nowMs()),
    );
    return toJobView(job);
  }

  /** Unknown, malformed and other workspaces' ids are all simply "not found". */
  async get(auth: AuthContext, id: string): Promise<JobView> {
    const job = isUuid(id) ? await this.#store.jobs.getJob(auth.apiUserId, id.toLowerCase()) : undefined;
    if (!job) throw notFound(`job '${id}' not found`);
    return toJobView(job);
  }

  async delete(auth: AuthContext, id: string): Promise<{ job_id: string; deleted: true }> {
    const deleted = isUuid(id) && (await this.#store.jobs.deleteJob(auth.apiUserId, id.toLowerCase()));
    if (!deleted) throw notFound(`job '${id}' not found`);
    return { job_id: id.toLowerCase(), deleted: true };
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
