import type { Selectable } from 'kysely';
import type { JobsTable } from '../schema.js';
import type { JobRecord } from '../job-store.js';

/** `jobs.tags` (0023): comma-joined, null without tags. */
export const tagsOf = (text: string | null): readonly string[] => (text === null ? [] : text.split(','));

export const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export const toJobRecord = (r: Selectable<JobsTable>): JobRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  apiUserId: r.api_user_id,
  type: r.type,
  status: r.status,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  completedAt: r.completed_at === null ? null : Number(r.completed_at),
  request: JSON.parse(r.request) as Record<string, unknown>,
  webhookUrl: r.webhook_url,
  zeroDataRetention: Number(r.zero_data_retention) === 1,
  result: parse(r.result),
  error: parse(r.error),
  leaseId: r.lease_id,
  leaseExpiresAt: r.lease_expires_at === null ? null : Number(r.lease_expires_at),
  attempts: Number(r.attempts),
  startedAt: r.started_at === null ? null : Number(r.started_at),
  outputKey: r.output_key,
  runAfter: r.run_after === null ? null : Number(r.run_after),
  faultCount: Number(r.fault_count),
  createdBy: r.created_by,
  progress: r.progress === null ? null : Number(r.progress),
  requestId: r.request_id,
  tags: tagsOf(r.tags),
});


/** Every column of `jobs`, for statements that name them (a RETURNING beside a FROM). */
export const JOB_COLUMNS = [
  'id', 'workspace_id', 'api_user_id', 'type', 'status', 'created_at', 'updated_at', 'completed_at', 'request', 'webhook_url',
  'zero_data_retention', 'result', 'error', 'lease_id', 'lease_expires_at', 'attempts', 'started_at', 'output_key', 'run_after',
  'fault_count', 'created_by', 'progress', 'request_id', 'outputs_expired_at', 'tags',
] as const satisfies readonly (keyof Selectable<JobsTable>)[];
