import type { Generated } from 'kysely';
import type { JobStatus } from '../domain/states.js';
import type { JobUpstreamsTable, RemoteWorkersTable, RoutingTables, WorkerTokensTable } from './remote-tables.js';

export type { JobUpstreamsTable, RemoteWorkersTable, WorkerTokensTable } from './remote-tables.js';

/**
 * Table shapes shared by every backend. Times are integer microseconds since the epoch; booleans
 * are 0/1 so that SQLite and PostgreSQL rows look alike to the query modules.
 */
export interface WorkspacesTable {
  id: string;
  name: string;
  api_access: number;
  max_concurrent_jobs: number;
  max_backlogged_jobs: number;
  created_at: number;
  /** Jobs in ACTIVE_STATUSES and in `backlogged`: running numbers kept by triggers (migration 0018). */
  active_jobs: Generated<number>;
  backlogged_jobs: Generated<number>;
}

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

/** A workspace's user-built node apps; versions are numbered and timed from counters on this row. */
export interface NodeAppsTable {
  id: string;
  workspace_id: string;
  name: string;
  /** Unique within the workspace. */
  slug: string;
  description: string;
  scope: string;
  /** The creating member's email. */
  author_id: string;
  created_at: number;
  updated_at: number;
  /** The newest version's number (0 before the first publish); the next is one more. */
  last_version: number;
  /** The newest version's creation time; the next is strictly later, so a version cursor is exact. */
  last_version_us: number;
}

export interface NodeAppVersionsTable {
  id: string;
  node_app_id: string;
  version: number;
  created_at: number;
  /** JSON objects, as text. */
  input_schema: string;
  output_schema: string;
  /** A JSON array of URL strings. */
  example_outputs: string;
  /** The publishing member's email. */
  published_by: string;
  /** The version's graph as JSON text, or null for a version without one. */
  graph: string | null;
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

/**
 * Files a workspace uploaded (POST /assets); the bytes live in the output store under
 * `output_key`. A deleted asset stays as a tombstone (`deleted_at` set) while a job created
 * before the deletion and not yet ended may still read its file.
 */
export interface AssetsTable {
  id: string;
  workspace_id: string;
  /** The output-store key of the file: unique among assets, random like a job's output key. */
  output_key: string;
  file_name: string;
  size_bytes: number;
  mime_type: string;
  width: number | null;
  height: number | null;
  description: string | null;
  /** A JSON object, as text. */
  metadata: string;
  /** Strictly increasing per workspace, so a time cursor over assets is exact. */
  created_at: number;
  /** Null while live; the deletion time on a tombstone. */
  deleted_at: number | null;
}

/**
 * Styles (LoRA) made by training jobs (docs/styles.md): the record, and the opaque artifact the
 * engines read. Booleans 0/1, times in microseconds.
 */
export interface StylesTable {
  id: string;
  workspace_id: string;
  api_user_id: string;
  trained_by: string | null;
  /** No foreign key: the style outlives a deleted training job. Unique: one style per job. */
  job_id: string | null;
  title: string | null;
  model: string;
  type: string | null;
  trigger_word: string | null;
  public: number;
  shared_with_workspace: number;
  /** A JSON array of URL strings. */
  urls: string;
  cover_url: string | null;
  /** The training job's output key: its cover file is kept and served while the style lives. */
  output_key: string | null;
  /** The artifact, a JSON object as text (at most 64 KiB). */
  artifact: string;
  like_count: number;
  share_link_at: number | null;
  /** Strictly increasing per workspace, so a time cursor over styles is exact. */
  created_at: number;
  updated_at: number;
}

export interface Database extends RoutingTables {
  workspaces: WorkspacesTable;
  members: MembersTable;
  api_users: ApiUsersTable;
  api_tokens: ApiTokensTable;
  jobs: JobsTable;
  job_transitions: JobTransitionsTable;
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
}
