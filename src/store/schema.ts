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
  status: string;
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
}

export interface Database {
  workspaces: WorkspacesTable;
  members: MembersTable;
  api_users: ApiUsersTable;
  api_tokens: ApiTokensTable;
  jobs: JobsTable;
}
