import type { Migration, MigrationProvider } from 'kysely';
import { IDENTITY_MIGRATION } from './0001-identity.js';
import { JOBS_MIGRATION } from './0002-jobs.js';
import { RUNNER_MIGRATION } from './0003-runner.js';
import { BILLING_MIGRATION } from './0004-billing.js';
import { NODE_APPS_MIGRATION } from './0005-node-apps.js';
import { WEBHOOKS_MIGRATION } from './0006-webhooks.js';
import { IDEMPOTENCY_MIGRATION } from './0007-idempotency.js';
import { JOBS_OUTPUT_KEY_MIGRATION } from './0008-jobs-output-key.js';
import { FAULT_BACKOFF_MIGRATION } from './0009-fault-backoff.js';
import { CREATE_PATH_INDEXES_MIGRATION } from './0010-create-path-indexes.js';
import { ASSETS_MIGRATION } from './0011-assets.js';
import { NODE_APP_GRAPHS_MIGRATION } from './0012-node-app-graphs.js';
import { STYLES_MIGRATION } from './0013-styles.js';
import { REMOTE_WORKERS_MIGRATION } from './0014-remote-workers.js';
import { TRANSITIONS_MIGRATION } from './0015-job-transitions.js';
import { RETENTION_MIGRATION } from './0016-retention.js';
import { JOB_UPSTREAMS_MIGRATION } from './0017-job-upstreams.js';
import { ADMISSION_COUNTS_MIGRATION } from './0018-admission-counts.js';
import { UPSTREAM_ENGINE_MIGRATION } from './0019-upstream-engine.js';
import { ENGINE_ROUTES_MIGRATION } from './0020-engine-routes.js';
import { FAIR_SHARE_MIGRATION } from './0021-fair-share.js';
import { TOKEN_BUDGETS_MIGRATION } from './0022-token-budgets.js';
import { JOB_TAGS_MIGRATION } from './0023-job-tags.js';
import { OPENAI_VIDEOS_MIGRATION } from './0024-openai-videos.js';
import { RUNNING_JOBS_MIGRATION } from './0025-running-jobs.js';

/**
 * Numbered migrations, written with Kysely's schema builder so every backend runs the same ones.
 * Never edit a migration that has shipped; add the next number. The keys are the names Kysely
 * records in kysely_migration: a renamed key would be a new migration to every existing store.
 */
const migrations: Record<string, Migration> = {
  '0001_identity': IDENTITY_MIGRATION,
  '0002_jobs': JOBS_MIGRATION,
  '0003_runner': RUNNER_MIGRATION,
  '0004_billing': BILLING_MIGRATION,
  '0005_node_apps': NODE_APPS_MIGRATION,
  '0006_webhooks': WEBHOOKS_MIGRATION,
  '0007_idempotency': IDEMPOTENCY_MIGRATION,
  '0008_jobs_output_key': JOBS_OUTPUT_KEY_MIGRATION,
  '0009_fault_backoff': FAULT_BACKOFF_MIGRATION,
  '0010_create_path_indexes': CREATE_PATH_INDEXES_MIGRATION,
  '0011_assets': ASSETS_MIGRATION,
  '0012_node_app_graphs': NODE_APP_GRAPHS_MIGRATION,
  '0013_styles': STYLES_MIGRATION,
  '0014_remote_workers': REMOTE_WORKERS_MIGRATION,
  '0015_job_transitions': TRANSITIONS_MIGRATION,
  '0016_retention': RETENTION_MIGRATION,
  '0017_job_upstreams': JOB_UPSTREAMS_MIGRATION,
  '0018_admission_counts': ADMISSION_COUNTS_MIGRATION,
  '0019_upstream_engine': UPSTREAM_ENGINE_MIGRATION,
  '0020_engine_routes': ENGINE_ROUTES_MIGRATION,
  '0021_fair_share': FAIR_SHARE_MIGRATION,
  '0022_token_budgets': TOKEN_BUDGETS_MIGRATION,
  '0023_job_tags': JOB_TAGS_MIGRATION,
  '0024_openai_videos': OPENAI_VIDEOS_MIGRATION,
  '0025_running_jobs': RUNNING_JOBS_MIGRATION,
};

/** The names of every migration this code knows, in order (readiness compares them with the store's). */
export const MIGRATION_NAMES: readonly string[] = Object.freeze(Object.keys(migrations).sort());

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
