// The tables of migrations 0014 (remote workers) and 0017 (provider jobs): the engines that run
// outside this process, apart to keep schema.ts short; times in microseconds.

/** Credentials of remote GPU workers (docs/workers.md): not API tokens, and of no workspace. */
export interface WorkerTokensTable {
  id: string;
  name: string;
  /** SHA-256 of the secret, hex; the secret itself is shown once and never stored. */
  token_hash: string;
  /** A JSON array of model glob patterns; empty: every remote-bound model. */
  models: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** Where each remote worker was last seen (its claims), for readiness. */
export interface RemoteWorkersTable {
  /** `<token id>:<worker_id>`. */
  id: string;
  token_id: string;
  /** The worker_id the worker sent. */
  name: string;
  /** The pool its claims asked for; null: any. */
  pool: string | null;
  /** A JSON array of the model patterns its claims asked for; empty: all its token allows. */
  models: string;
  last_seen_at: number;
}

/** Work an engine holds elsewhere for a job (0017, 0019; store/upstream-store.ts). */
export interface JobUpstreamsTable {
  job_id: string;
  /** The engine holding the work: `provider:replicate`, `comfyui:gpu` (migration 0019 renamed it from `provider`). */
  engine: string;
  upstream_id: string;
  /** A JSON object as text. */
  state: string;
  updated_at: number;
}

/** A job's route through its chain (migration 0020, store/route-store.ts). */
export interface JobRoutesTable {
  job_id: string;
  /** The engine that took the job; null while none has. */
  engine: string | null;
  /** A JSON array of route steps, as text. */
  trail: string;
  updated_at: number;
}

/** A place a running job holds on an engine with `max_in_flight` (migration 0020). */
export interface EngineSlotsTable {
  job_id: string;
  engine: string;
  lease_id: string;
  acquired_at: number;
}

/** Routing's tables (migration 0020), part of the Database. */
export interface RoutingTables {
  job_routes: JobRoutesTable;
  engine_slots: EngineSlotsTable;
}
