import type { Generated } from 'kysely';
import type { JobStatus } from '../domain/states.js';
import type { JobUpstreamsTable, RemoteWorkersTable, RoutingTables, WorkerTokensTable } from './remote-tables.js';
import type { AssetsTable, NodeAppVersionsTable, NodeAppsTable, StylesTable } from './content-tables.js';
import type { WorkspacesTable } from './workspace-tables.js';

export type { JobUpstreamsTable, RemoteWorkersTable, WorkerTokensTable } from './remote-tables.js';
export type { AssetsTable, NodeAppVersionsTable, NodeAppsTable, StylesTable } from './content-tables.js';
export type { WorkspacesTable } from './workspace-tables.js';

/**
 * Table shapes shared by every backend. Times are integer microseconds since the epoch; booleans
 * are 0/1 so that SQLite and PostgreSQL rows look alike to the query modules.
 */
export interface MembersTable {
  workspace_id: string;
  email: string;
  role: string;
  created_at: number;
}

/** The API acts as its own user in each workspace (spec 5.5): one row per workspace. */
export interface ApiUsersTable {
  id: string;
  workspace_id: string;
  /** Creation time of this user's newest job; the next one is strictly later. */
  last_job_us: number;
}

export interface ApiTokensTable {
  id: string;
  workspace_id: string;
  name: string;
  token_hash: string;
  created_by: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** JSON of the token's TokenLimits; null: none (0022). */
  limits: string | null;
}

/** The jobs of tokens with limits (0022): their spend is read from the ledger through these. */
export interface TokenJobsTable {
  job_id: string;
  token_id: string;
  created_at: number;
}

export interface JobsTable {
  id: string;
  workspace_id: string;
  api_user_id: string;
  type: string;
  /** Written only by the named moves of domain/states.ts (and the insert). */
  status: JobStatus;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  /** The validated request body with defaults applied, as JSON. */
  request: string;
  webhook_url: string | null;
  zero_data_retention: number;
  result: string | null;
  error: string | null;
  /** Random per claim: only the holder of the current lease may move a running job. */
  lease_id: string | null;
  lease_expires_at: number | null;
  /** How many times a worker has claimed the job. */
  attempts: number;
  /** When the first claim started the job; its timeout counts from here. */
  started_at: number | null;
  /** Names the job's output directory and URLs; random, set by the first claim. */
  output_key: string | null;
  /** Not claimable before this instant: set when an infrastructure fault handed the job back. */
  run_after: number | null;
  /** How many times an infrastructure fault handed the job back (bounded by the run policy). */
  fault_count: number;
  /** The member whose token created the job (0013); null for older jobs. A trained style is theirs. */
  created_by: string | null;
  /** A remote worker's last reported fraction done, 0..1 (0014); null when none was reported. */
  progress: number | null;
  /** The X-Request-Id of the request that created the job (0015); null for older jobs and other transports. */
  request_id: string | null;
  /** When the retention janitor expired the finished job's outputs (0016); null while they may be served. */
  outputs_expired_at: number | null;
  /** The caller's tags (0023), comma-joined in code point order; null: none. */
  tags: string | null;
}

/** One tag of a job (0023), for the list's filter and usage by tag; deleted with the job. */
export interface JobTagsTable {
  job_id: string;
  tag: string;
  api_user_id: string;
  /** The job's created_at. */
  created_at: number;
}

/**
 * Every status a job has had (0015), written by triggers on `jobs` with its insert and with every
 * status change; deleted with the job. Ids increase with each row, so a job's rows are in order.
 */
export interface JobTransitionsTable {
  id: Generated<number>;
  job_id: string;
  status: JobStatus;
  /** The job's updated_at of that change. */
  at: number;
}

/** One row per probe name, rewritten by each readiness check to prove the store takes writes. */
export interface HealthProbesTable {
  id: string;
  at: number;
}

/**
 * The money ledger (integer micro-USD), append-only. Each job has at most one entry of each kind:
 * a hold at admission, then either a charge (completed) or a release (failed, cancelled).
 */
export interface LedgerEntriesTable {
  id: string;
  workspace_id: string;
  kind: string;
  /** Always positive; the kind says which way it moves the balance. */
  amount_micros: number;
  /** Null for top-ups. No foreign key: usage outlives the job's deletion. */
  job_id: string | null;
  job_type: string | null;
  /** For charges, strictly increasing per workspace and equal to the job's completed_at. */
  at: number;
  /** Who added a top-up (the owner's email, or `bootstrap`). */
  created_by: string | null;
}

/**
 * Running totals of a workspace's ledger, updated in the same transaction as each entry (a test
 * checks they equal the entries' sums). CHECKs make a negative available balance unwritable.
 */
export interface BalancesTable {
  workspace_id: string;
  /** Top-ups minus charges. */
  balance_micros: number;
  /** Holds not yet charged or released. */
  held_micros: number;
  /** Time of the newest charge; the next is strictly later, so a usage cursor is exact. */
  last_charge_at: number;
}

/** A workspace's webhook signing secret; after a rotation the previous one signs too, for a while. */
export interface WebhookSecretsTable {
  workspace_id: string;
  /** `whsec_...`. Kept in clear: an HMAC key must be usable to sign (unlike API tokens). */
  secret: string;
  previous_secret: string | null;
  /** The previous secret signs deliveries until this instant. */
  previous_until: number | null;
  created_at: number;
}

/**
 * The outbox: one row per webhook event, written in the transaction that ends the job. No foreign
 * key to the job: a cancelled job is deleted at once, and its delivery still goes out.
 */
export interface WebhookDeliveriesTable {
  /** The `webhook-id` header, the same on every attempt. */
  id: string;
  job_id: string;
  workspace_id: string;
  api_user_id: string;
  url: string;
  /** The job as GET /jobs/{id} showed it at its end, as JSON (output URLs still relative). */
  payload: string;
  /** pending, delivered, gone (the receiver said 410), refused (address guard), exhausted. */
  state: string;
  attempts: number;
  /** When a pending delivery is next due. */
  next_attempt_at: number | null;
  /** A sender holds the row until then; after a crash it is due again. */
  lease_until: number | null;
  created_at: number;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  attempted_at: number;
  /** The receiver's HTTP status, or null when there was none (timeout, refused, no connection). */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  next_retry_at: number | null;
}

/**
 * Idempotency-Key per workspace (docs/decisions.md): an in-flight marker while the first request
 * runs, then the response it gave, written in the transaction that created the job. Kept 24 h.
 */
export interface IdempotencyKeysTable {
  /** Random per request that took the key; also salts `request_hash`. */
  id: string;
  workspace_id: string;
  key: string;
  endpoint: string;
  /** HMAC-SHA256 (keyed by `id`) of the canonical request: the body is never stored. */
  request_hash: string;
  /** in_flight, done. */
  state: string;
  /** An in-flight marker past this instant was left by a request that died. */
  lease_until: number | null;
  /** No foreign key: the replay still answers after the job is deleted. */
  job_id: string | null;
  response_status: number | null;
  /** The JSON body first answered. */
  response_body: string | null;
  created_at: number;
}

/** A video created through POST /v1/videos (0024): the model id it named, when not the path; deleted with the job. */
export interface OpenAiVideosTable {
  job_id: string;
  model: string;
}

export interface Database extends RoutingTables {
  workspaces: WorkspacesTable;
  members: MembersTable;
  api_users: ApiUsersTable;
  api_tokens: ApiTokensTable;
  token_jobs: TokenJobsTable;
  jobs: JobsTable;
  job_transitions: JobTransitionsTable;
  job_tags: JobTagsTable;
  ledger_entries: LedgerEntriesTable;
  balances: BalancesTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  node_apps: NodeAppsTable;
  node_app_versions: NodeAppVersionsTable;
  idempotency_keys: IdempotencyKeysTable;
  assets: AssetsTable;
  styles: StylesTable;
  health_probes: HealthProbesTable;
  worker_tokens: WorkerTokensTable;
  remote_workers: RemoteWorkersTable;
  job_upstreams: JobUpstreamsTable;
  openai_videos: OpenAiVideosTable;
}
