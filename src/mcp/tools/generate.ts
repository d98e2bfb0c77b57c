import { Type } from '@sinclair/typebox';
import { invalid } from '../../domain/errors.js';
import { Job } from '../../services/job-view.js';
import type { CreatedJobView, JobView } from '../../services/job-view.js';
import { outputLinks, waitForEnd } from '../job-results.js';
import { defineTool } from '../tool.js';
import { ModelId } from './get-model-schema.js';

/** The longest a generate call may wait for its job: a minute keeps one tool call reasonable. */
export const MAX_WAIT_SECONDS = 60;
const IDEMPOTENCY_KEY_MAX = 255;

/** How the use case's refusals name these options: as this tool's arguments. */
const LABELS = { webhookUrl: 'webhook_url', zeroDataRetention: 'zero_data_retention' } as const;

/** A created job as get_job shows a job: what has no value yet is absent, not null. */
function asJobView(created: CreatedJobView): JobView {
  const { completed_at: _c, result: _r, ...rest } = created;
  return rest;
}

export function checkedKey(key: string | undefined): string | null {
  if (key === undefined) return null;
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX || !/^[\x20-\x7E]+$/.test(key)) {
    throw invalid(`'idempotency_key' must be 1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters`);
  }
  return key;
}

export const generate = defineTool({
  name: 'generate',
  title: 'Generate media',
  description:
    'Creates a generation job for a model (an image, video, audio or 3D model) and returns the job. `input` is the request body the ' +
    "model's schema describes (get_model_schema): unknown fields are refused. With wait_seconds (up to 60) the call waits for the job " +
    'to finish and returns it completed with its result URLs (also as resource links), or failed; if it is still running then, ' +
    'poll get_job. A completed job is charged its price from the workspace balance. Refusals (invalid input, insufficient balance, ' +
    'too many jobs, a retired model) come back as tool errors with the message the HTTP API gives.',
  input: Type.Object(
    {
      model: ModelId,
      input: Type.Record(Type.String(), Type.Unknown(), {
        description: 'The request body, as get_model_schema describes it',
        examples: [{ prompt: 'a red fox in the snow', aspect_ratio: '1:1', resolution: '1K' }],
      }),
      webhook_url: Type.Optional(
        Type.String({ description: 'An absolute http(s) URL that receives a POST when the job reaches a terminal status', examples: ['https://example.com/hooks/mediagen'] }),
      ),
      wait_seconds: Type.Optional(
        Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS, default: 0, description: 'How long to wait for the job to finish before answering (0: answer at once)' }),
      ),
      zero_data_retention: Type.Optional(Type.Boolean({ description: 'Ask for zero data retention; only some models offer it' })),
      idempotency_key: Type.Optional(
        Type.String({ description: 'Makes a retry safe: the same key with the same request answers the first job instead of creating another' }),
      ),
    },
    { additionalProperties: false },
  ),
  output: Job,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(deps, input, ctx) {
    const idempotencyKey = checkedKey(input.idempotency_key);
    // POST /mcp is not refused at the door while the disk cannot take writes (reads go on); this is.
    await deps.readiness.assertCanStore();
    const created = await deps.generation.create(
      {
        model: input.model,
        body: input.input,
        caller: ctx.caller,
        options: { webhookUrl: input.webhook_url ?? null, zeroDataRetention: input.zero_data_retention ?? false, idempotencyKey },
      },
      { allowPrivateUrls: deps.allowPrivateUrls, publicUrl: ctx.publicUrl, labels: LABELS },
    );
    const wait = input.wait_seconds ?? 0;
    const job = wait > 0 ? await waitForEnd(deps, ctx, created.job.job_id, wait) : asJobView(created.job);
    return { structured: job, links: outputLinks(job) };
  },
});
