import type { Micros } from '../lib/time.js';
import type { AssetStore } from './asset-store.js';
import type { BillingStore } from './billing-store.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { IdentityStore } from './identity-store.js';
import type { JobStore } from './job-store.js';
import type { NodeAppStore } from './node-app-store.js';
import type { JobEvent, QueueStore } from './queue-store.js';
import type { QueueStatsStore } from './queue-stats.js';
import type { RetentionStore } from './retention-store.js';
import type { StyleStore } from './style-store.js';
import type { WebhookStore } from './webhook-store.js';
import type { WorkerTokenStore } from './remote-token-store.js';
import type { UpstreamStore } from './upstream-store.js';
import type { TokenBudgetStore } from './token-budget-store.js';
import type { RouteStore } from './route-store.js';
import type { OpenAiVideoStore } from './openai-video-store.js';

export type { LockedWorkspace, WorkspaceLimits } from './locked-workspace.js';
export type { ClaimTypes, JobMove, JobPatch, NewClaim, NewClaims, OverdueCutoff } from './queue-inputs.js';
export type { JobHistory, JobTransition } from './job-history.js';
export type {
  ApiToken,
  IdentityStore,
  Member,
  NewToken,
  NewWorkspace,
  Role,
  TokenOwner,
  Workspace,
  WorkspacePatch,
} from './identity-store.js';
export type { JobQuery, JobRecord, JobStore, JobSummary, NewJob } from './job-store.js';
export type { AdmissionCounts, AdmissionLock, JobEvent, JobMoveName, QueueStore } from './queue-store.js';

/**
 * The narrow interfaces the services use. Every backend (sqlite/, postgres/) implements the same
 * ones and runs the same contract tests; each port has its module beside this one, composed here.
 */

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
  readonly upstreams: UpstreamStore;
  readonly tokenBudgets: TokenBudgetStore;
  /**
   * Runs `fn` inside a savepoint of this transaction: if it throws, what it wrote (and the events it
   * sent) is undone and the transaction goes on without it. Only a transaction's tx has it; for
   * group commits of several callers' writes (services/common/shared-writes.ts).
   */
  readonly savepoint?: <T>(fn: () => Promise<T>) => Promise<T>;
}

export interface Store extends StoreTx {
  /**
   * Write transactions of different workspaces run side by side (PostgreSQL's row locks); false
   * where the backend has one writer at a time (SQLite). Group commits batch per workspace when
   * true, and across workspaces when false.
   */
  readonly parallelWrites: boolean;
  /** Routing's records: a job's route through its chain, and the places jobs hold on limited engines (docs/routing.md). */
  readonly routes: RouteStore;
  /** The model ids POST /v1/videos named (services/openai/); each write is its own. */
  readonly openaiVideos: OpenAiVideoStore;
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
