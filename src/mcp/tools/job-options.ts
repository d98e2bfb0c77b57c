import { Type } from '@sinclair/typebox';
import { invalid } from '../../domain/error-catalogue.js';
import { MAX_TAGS, TAG_RULE } from '../../domain/job-tags.js';
import type { CreatedJob } from '../../services/jobs/job-admission.js';
import type { CreatedJobView, JobView } from '../../services/common/job-view.js';
import { outputLinks, waitForEnd } from '../job-results.js';
import type { McpDeps, ToolContext, ToolOutput } from '../tool.js';

/**
 * What every job-creating tool (generate, train_style, execute_node_app) takes beside its body,
 * and how it answers: the job as get_job shows it, followed to its end for `wait_seconds`.
 */

/** The longest a call may wait for its job: a minute keeps one tool call reasonable. */
export const MAX_WAIT_SECONDS = 60;
const IDEMPOTENCY_KEY_MAX = 255;

/** How the use cases' refusals name these options: as the tools' arguments. */
export const LABELS = { webhookUrl: 'webhook_url', zeroDataRetention: 'zero_data_retention', tags: 'tags' } as const;

export const WebhookUrl = Type.String({
  description: 'An absolute http(s) URL that receives a POST when the job reaches a terminal status',
  examples: ['https://example.com/hooks/mediagen'],
});

/** Checked by the use case (domain/job-tags.ts), whose refusals name `tags`. */
export const Tags = Type.Array(Type.String({ description: TAG_RULE }), {
  description:
    `Tags for the job (up to ${MAX_TAGS}; duplicates count once), as X-Mediagen-Tags over HTTP: shown on the job, and list_jobs takes one as \`tag\``,
  examples: [['team-a', 'campaign-7']],
});

export const WaitSeconds = Type.Integer({
  minimum: 0,
  maximum: MAX_WAIT_SECONDS,
  default: 0,
  description: 'How long to wait for the job to finish before answering (0: answer at once)',
});

export const IdempotencyKey = Type.String({
  description: 'Makes a retry safe: the same key with the same request answers the first job instead of creating another',
});

export function checkedKey(key: string | undefined): string | null {
  if (key === undefined) return null;
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX || !/^[\x20-\x7E]+$/.test(key)) {
    throw invalid(`'idempotency_key' must be 1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters`);
  }
  return key;
}

/** A created job as get_job shows a job: what has no value yet is absent, not null. */
function asJobView(created: CreatedJobView): JobView {
  const { completed_at: _c, result: _r, ...rest } = created;
  return rest;
}

/** The created job at once, or followed for `waitSeconds`; a completed job's outputs as resource links. */
export async function jobAnswer(deps: Pick<McpDeps, 'waits'>, ctx: ToolContext, created: CreatedJob, waitSeconds: number): Promise<ToolOutput<JobView>> {
  const job = waitSeconds > 0 ? await waitForEnd(deps, ctx, created.job.job_id, waitSeconds) : asJobView(created.job);
  return { structured: job, links: outputLinks(job) };
}
