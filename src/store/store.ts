import type { JobStatus, MoveName } from '../domain/states.js';
import type { Micros } from '../lib/time.js';
import type { AssetStore } from './asset-store.js';
import type { BillingStore } from './billing-store.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { JobHistory } from './job-history.js';
import type { LockedWorkspace } from './locked-workspace.js';
import type { JobMove, NewClaim, OverdueCutoff } from './queue-inputs.js';
import type { NodeAppStore } from './node-app-store.js';
import type { QueueStatsStore } from './queue-stats.js';
import type { RetentionStore } from './retention-store.js';
import type { StyleStore } from './style-store.js';
import type { WebhookStore } from './webhook-store.js';
import type { WorkerTokenStore } from './remote-token-store.js';

export type { LockedWorkspace, WorkspaceLimits } from './locked-workspace.js';
export type { ClaimTypes, JobMove, JobPatch, NewClaim, OverdueCutoff } from './queue-inputs.js';
export type { JobHistory, JobTransition } from './job-history.js';

/**
 * The narrow interfaces the services use. Every backend (sqlite/, postgres/) implements the same
 * ones and runs the same contract tests.
 */
export type Role = 'owner' | 'admin' | 'member';

export interface Workspace {
  readonly id: string;
  readonly name: string;
  readonly apiAccess: boolean;
  readonly maxConcurrentJobs: number;
  readonly maxBackloggedJobs: number;
  readonly createdAt: Micros;
}

export interface Member {
  readonly workspaceId: string;
  readonly email: string;
  readonly role: Role;
  readonly createdAt: Micros;
}

export interface ApiToken {
  readonly id: string;
  readonly workspaceId: string;
  readonly name: string;
  readonly createdBy: string;
  readonly createdAt: Micros;
  readonly lastUsedAt: Micros | null;
  readonly revokedAt: Micros | null;
}

export interface TokenOwner {
  readonly token: ApiToken;
  readonly workspace: Workspace;
  readonly apiUserId: string;
}

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
}

export interface NewWorkspace {
  readonly id: string;
  readonly name: string;
  readonly ownerEmail: string;
  readonly apiUserId: string;
  readonly maxConcurrentJobs: number;
  readonly maxBackloggedJobs: number;
  readonly now: Micros;
}

export interface WorkspacePatch {
  readonly apiAccess?: boolean;
  readonly maxConcurrentJobs?: number;
  readonly maxBackloggedJobs?: number;
}

export interface NewToken {
  readonly id: string;
  readonly workspaceId: string;
  readonly name: string;
  readonly tokenHash: string;
  readonly createdBy: string;
  readonly now: Micros;
}

export interface IdentityStore {
  /** Creates the workspace, its owner and its API user together; undefined if the name is taken. */
  createWorkspace(input: NewWorkspace): Promise<Workspace | undefined>;
  findWorkspace(idOrName: string): Promise<Workspace | undefined>;
  /** Every workspace, oldest first (the operator's view: `mediagen admin workspace list`). */
  listWorkspaces(): Promise<Workspace[]>;
  countWorkspaces(): Promise<number>;
  updateWorkspace(id: string, patch: WorkspacePatch): Promise<Workspace | undefined>;
  getMember(workspaceId: string, email: string): Promise<Member | undefined>;
  /** The workspace's members, oldest first (the owner, who came with the workspace, leads). */
  listMembers(workspaceId: string): Promise<Member[]>;
  /** Adds or changes a member's role. */
  putMember(member: Member): Promise<Member>;
  insertToken(token: NewToken): Promise<ApiToken>;
  listTokens(workspaceId: string): Promise<ApiToken[]>;
  getToken(workspaceId: string, tokenId: string): Promise<ApiToken | undefined>;
  revokeToken(workspaceId: string, tokenId: string, now: Micros): Promise<ApiToken | undefined>;
  findTokenByHash(tokenHash: string): Promise<TokenOwner | undefined>;
  /** Records use at `now` unless the last recorded use is later than `notSince`. */
  touchToken(tokenId: string, now: Micros, notSince: Micros): Promise<void>;
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
}

export interface JobQuery {
  readonly apiUserId: string;
  /** Only jobs created at or after this instant. */
  readonly from?: Micros;
  /** Only jobs created strictly before this instant. */
  readonly before?: Micros;
  readonly types?: readonly string[];
  readonly status?: JobStatus;
  readonly limit: number;
}

/** What the API shows of a job (GET, lists, webhook payloads): the columns a view reads, nothing a worker needs. */
export type JobSummary = Pick<JobRecord, 'id' | 'type' | 'status' | 'createdAt' | 'completedAt' | 'result' | 'error'>;

export interface JobStore {
  /**
   * Stores a job. Its created_at is `now`, or one microsecond after the API user's newest job if
   * that is later, so creation times per user are strictly increasing and a time cursor is exact.
   */
  insertJob(job: NewJob, now: Micros): Promise<JobRecord>;
  getJob(apiUserId: string, id: string): Promise<JobRecord | undefined>;
  /** The job as the API shows it: its view's columns only (no request body to parse). */
  getJobSummary(apiUserId: string, id: string): Promise<JobSummary | undefined>;
  /** Newest first; the view's columns only. */
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

/** The moves `QueueStore.move` makes (the claim picks its job itself: `QueueStore.claim`). */
export type JobMoveName = Exclude<MoveName, 'claim'>;

/**
 * The runner's queries. Every status change is one guarded UPDATE that returns the row only if
 * the guard held, so two writers can never both move the same job.
 */
export interface QueueStore {
  /**
   * Locks the workspace row until the transaction ends; undefined when there is no such workspace.
   * The only source of a `LockedWorkspace` (see there for the lock order).
   */
  lockWorkspace(workspaceId: string): Promise<LockedWorkspace | undefined>;
  /** How many of the workspace's jobs are in `statuses`, counting no further than `atMost`. */
  countJobs(workspaceId: string, statuses: readonly JobStatus[], atMost: number): Promise<number>;
  /**
   * The `claim` move: atomically takes the oldest queued job whose run_after (if any) has come,
   * moving it to `scheduled` under a new lease.
   */
  claim(claim: NewClaim): Promise<JobRecord | undefined>;
  /**
   * False when the lease is gone: the job was cancelled, deleted, finished or reaped. A lease
   * exists only while its job runs: every move out of a running status clears it. `progress`, a
   * remote worker's fraction done, is stored with it (a claim starts the attempt at null).
   */
  extendLease(id: string, leaseId: string, expiresAt: Micros, progress?: number): Promise<boolean>;
  /**
   * Makes the named move (domain/states.ts `MOVES`): one UPDATE guarded by the move's `from`
   * statuses (and the lease, for a holder's move) that returns the row only if the guard held.
   */
  move<N extends JobMoveName>(name: N, move: JobMove<N>): Promise<JobRecord | undefined>;
  /** Running jobs whose lease ran out before `now`, oldest lease first. */
  expiredLeases(now: Micros, limit: number): Promise<JobRecord[]>;
  /**
   * Queued and running jobs of each cutoff's type that have outlived it: first claimed before
   * `before`, or waiting in the queue since before it (their last status change). Oldest first.
   */
  overdueJobs(cutoffs: readonly OverdueCutoff[], limit: number): Promise<JobRecord[]>;
  /** Ids of the workspace's oldest backlogged jobs, in creation order. */
  oldestBacklogged(workspaceId: string, limit: number): Promise<string[]>;
  workspacesWithBacklog(): Promise<string[]>;
  /** Any job by id, whoever owns it (the runner's view). */
  findJob(id: string): Promise<JobRecord | undefined>;
  /**
   * Announces the event when the transaction commits (nothing if it rolls back): to this
   * process's `onEvent` listeners, and to other processes where the backend can reach them
   * (PostgreSQL NOTIFY; SQLite writes it to the wake socket of each process sharing its file).
   */
  notify(event: JobEvent): Promise<void>;
}

/** What a committed change announces: to this process, and to the others sharing the store. */
export type JobEvent =
  | { readonly kind: 'queued' }
  | { readonly kind: 'cancelled'; readonly jobId: string }
  /** The job's status changed, or it was deleted: its waiters read it again. */
  | { readonly kind: 'changed'; readonly jobId: string }
  /** A webhook event was written to the outbox. */
  | { readonly kind: 'webhook' };

export interface StoreProbe {
  /** Migrations of this code not applied to the store (an older schema). */
  readonly pendingMigrations: readonly string[];
  /** Migrations applied to the store that this code does not know (a newer binary migrated it). */
  readonly unknownMigrations: readonly string[];
}

/** The stores as seen inside one transaction. */
export interface StoreTx {
  readonly identity: IdentityStore;
  readonly jobs: JobStore;
  readonly queue: QueueStore;
  readonly billing: BillingStore;
  readonly nodeApps: NodeAppStore;
  readonly webhooks: WebhookStore;
  readonly idempotency: IdempotencyStore;
  readonly assets: AssetStore;
  readonly styles: StyleStore;
  readonly workerTokens: WorkerTokenStore;
}

export interface Store extends StoreTx {
  /** Queue figures for the metrics; read outside any transaction. */
  readonly stats: QueueStatsStore;
  /** The retention janitor's batched sweeps: each call is its own short transaction. */
  readonly retention: RetentionStore;
  /**
   * Runs `fn` in one write transaction: everything it does through `tx` commits together or not
   * at all. Services own transactions; a single store call is its own transaction.
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /**
   * Receives this process's own events (`queue.notify`) once their transaction has committed.
   * Returns the function that stops receiving.
   */
  onEvent(fn: (event: JobEvent) => void): () => void;
  /**
   * Readiness: proves the store takes a write (one upserted probe row; throws otherwise) and
   * compares the migrations it has applied with the code's list.
   */
  probe(now: Micros): Promise<StoreProbe>;
  /**
   * Receives the events other processes `notify` (PostgreSQL LISTEN; SQLite's wake socket in
   * `<data dir>/wake`). Absent where the backend has none. Returns the function that stops listening.
   */
  readonly listen?: (fn: (event: JobEvent) => void) => Promise<() => Promise<void>>;
  /**
   * Writes a consistent copy of the whole store to a new file while it stays in use, and returns its
   * size in bytes. Only the embedded store has it; PostgreSQL is copied with its own tools (pg_dump).
   */
  readonly backup?: (toFile: string) => Promise<number>;
  close(): Promise<void>;
}
