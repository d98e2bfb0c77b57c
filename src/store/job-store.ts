import type { JobStatus } from '../domain/states.js';
import type { Micros } from '../lib/time.js';
import type { JobHistory } from './job-history.js';

export interface JobRecord {
  readonly id: string;
  readonly workspaceId: string;
  readonly apiUserId: string;
  readonly type: string;
  readonly status: JobStatus;
  readonly createdAt: Micros;
  readonly updatedAt: Micros;
  readonly completedAt: Micros | null;
  readonly request: Readonly<Record<string, unknown>>;
  readonly webhookUrl: string | null;
  readonly zeroDataRetention: boolean;
  readonly result: Readonly<Record<string, unknown>> | null;
  readonly error: Readonly<{ code: string; message?: string }> | null;
  readonly leaseId: string | null;
  readonly leaseExpiresAt: Micros | null;
  readonly attempts: number;
  readonly startedAt: Micros | null;
  readonly outputKey: string | null;
  /** Not claimable before this instant (an infrastructure fault's backoff); null: at once. */
  readonly runAfter: Micros | null;
  /** Hand-backs caused by infrastructure faults so far. */
  readonly faultCount: number;
  /** The member whose token created the job; null for jobs stored before it was recorded. */
  readonly createdBy: string | null;
  /** A remote worker's last reported fraction done, 0..1, of the current attempt; null: none reported. */
  readonly progress: number | null;
  /** The X-Request-Id of the request that created it; null when none (older jobs, other transports). */
  readonly requestId: string | null;
  /** Its creator's tags (domain/job-tags.ts), in code point order; empty when it has none. */
  readonly tags: readonly string[];
}

export interface NewJob {
  readonly id: string;
  readonly workspaceId: string;
  readonly apiUserId: string;
  readonly type: string;
  readonly status: JobStatus;
  readonly request: Readonly<Record<string, unknown>>;
  readonly webhookUrl: string | null;
  readonly zeroDataRetention: boolean;
  /** The member whose token created it (AuthContext.memberEmail): every job is some member's. */
  readonly createdBy: string;
  /** The creating request's X-Request-Id, for the worker's log lines about the job. */
  readonly requestId?: string | null;
  /** Checked, unique and sorted (domain/job-tags.ts); absent or empty: none, and no tag row is written. */
  readonly tags?: readonly string[];
}

export interface JobQuery {
  readonly apiUserId: string;
  /** Only jobs created at or after this instant. */
  readonly from?: Micros;
  /** Only jobs created strictly before this instant. */
  readonly before?: Micros;
  readonly types?: readonly string[];
  readonly status?: JobStatus;
  /** Only jobs carrying this tag (a seek of job_tags' (api_user_id, tag, created_at) index). */
  readonly tag?: string;
  readonly limit: number;
  /** By created_at: `desc` (default, newest first) or `asc` (OpenAI's list, GET /v1/videos?order=asc). */
  readonly order?: 'asc' | 'desc';
}

/** What the API shows of a job (GET, lists, webhook payloads): the columns a view reads, nothing a worker needs. */
export type JobSummary = Pick<JobRecord, 'id' | 'type' | 'status' | 'createdAt' | 'completedAt' | 'result' | 'error' | 'tags'>;

/** Jobs as their API user sees them; the runner's queries are QueueStore's (queue-store.ts). */
export interface JobStore {
  /**
   * Stores a job. Its created_at is `now`, or one microsecond after the API user's newest job if
   * that is later, so creation times per user are strictly increasing and a time cursor is exact.
   */
  insertJob(job: NewJob, now: Micros): Promise<JobRecord>;
  /** Stores jobs as insertJob would one after another, in few statements (a batch of creates). */
  insertJobs(jobs: readonly NewJob[], now: Micros): Promise<JobRecord[]>;
  getJob(apiUserId: string, id: string): Promise<JobRecord | undefined>;
  /** The job as the API shows it: its view's columns only (no request body to parse). */
  getJobSummary(apiUserId: string, id: string): Promise<JobSummary | undefined>;
  /** Newest first (oldest first with `order: 'asc'`); the view's columns only. */
  listJobs(query: JobQuery): Promise<JobSummary[]>;
  deleteJob(apiUserId: string, id: string): Promise<boolean>;
  /** The API user's job and its status changes with an id above `afterId` (at most `limit`); undefined: no such job. */
  transitions(apiUserId: string, id: string, afterId: number, limit: number): Promise<JobHistory<JobSummary> | undefined>;
  /**
   * Which of `keys` name files that must be kept: the output key of any job neither failed nor
   * cancelled (their files are removed with their end), a style's (its training job's, holding its cover), a live
   * asset's key, and a deleted asset's key while a job of its workspace that existed at the
   * deletion has not ended (the job may still read the file). Keys of deleted jobs no style
   * holds, of assets no job needs any more, and keys nothing ever had, are absent.
   * At most a few hundred keys per call.
   */
  outputKeysInUse(keys: readonly string[]): Promise<Set<string>>;
  /**
   * Which of `keys` are the output key of a job whose files may be served under /outputs: any job
   * neither failed nor cancelled, and a style's (its cover outlives a deleted training job). Asset keys are
   * not: asset files are served only at their own URL.
   */
  jobOutputKeysServed(keys: readonly string[]): Promise<Set<string>>;
}
