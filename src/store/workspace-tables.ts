import type { Generated } from 'kysely';

/** The workspaces table (schema.ts re-exports it; kept apart so schema.ts stays within its length). */
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
  /** Claim priority, 0 to 9, higher first (migration 0021, store/sql/claim-statement.ts). */
  priority: Generated<number>;
}
