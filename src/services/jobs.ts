import type { Clock } from '../lib/clock.js';
import { isUuid, newId } from '../lib/ids.js';
import { formatMicros, msToMicros } from '../lib/time.js';
import type { Store } from '../store/store.js';
import type { Catalog, CatalogEntry } from './catalog/catalog.js';
import { notFound, invalid } from './errors.js';
import type { AuthContext } from './identity.js';
import { toJobView } from './job-view.js';
import type { JobView } from './job-view.js';
import { parseDateTime, parseLimit, rejectUnknown, single } from './list-query.js';
import type { RawQuery } from './list-query.js';
import { INITIAL_STATUS, JOB_STATUSES, isJobStatus } from './states.js';

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

const LIST_PARAMS = ['cursor', 'limit', 'types', 'status'] as const;

/** Creating, reading, listing and deleting jobs of the caller's API user. */
export class JobService {
  readonly #store: Store;
  readonly #catalog: Catalog;
  readonly #clock: Clock;

  constructor(store: Store, catalog: Catalog, clock: Clock) {
    this.#store = store;
    this.#catalog = catalog;
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

  async list(auth: AuthContext, query: RawQuery): Promise<JobPage> {
    rejectUnknown(query, LIST_PARAMS);
    const limit = parseLimit(query);
    const before = parseDateTime(query, 'cursor');
    const status = single(query, 'status');
    if (status !== undefined && !isJobStatus(status)) {
      throw invalid(`query parameter 'status' must be one of ${JOB_STATUSES.join(', ')}, got '${status}'`);
    }
    const typesRaw = single(query, 'types');
    let types: string[] | undefined;
    if (typesRaw !== undefined) {
      types = typesRaw.split(',').map((t) => t.trim());
      const bad = types.find((t) => !this.#catalog.get(t));
      if (bad !== undefined) {
        throw invalid(
          `query parameter 'types' must be a comma-separated list of job types such as image/vendor-a/model-a-2/medium; unknown type '${bad}'`,
        );
      }
    }
    // One extra row tells whether another page exists, so the last page says null.
    const rows = await this.#store.jobs.listJobs({ apiUserId: auth.apiUserId, before, types, status, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const more = rows.length > limit;
    return {
      items: page.map(toJobView),
      next_cursor: more ? formatMicros(page[page.length - 1]!.createdAt) : null,
    };
  }
}
