import { Type } from '@sinclair/typebox';
import { invalid } from '../../domain/error-catalogue.js';
import { Job } from '../../services/common/job-view.js';
import { defineTool } from '../tool.js';
import { ModelId, ModelInput } from './get-model-schema.js';
import { IdempotencyKey, LABELS, Tags, WaitSeconds, WebhookUrl, checkedKey, jobAnswer } from './job-options.js';

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
      input: ModelInput,
      webhook_url: Type.Optional(WebhookUrl),
      wait_seconds: Type.Optional(WaitSeconds),
      zero_data_retention: Type.Optional(Type.Boolean({ description: 'Ask for zero data retention; only some models offer it' })),
      idempotency_key: Type.Optional(IdempotencyKey),
      tags: Type.Optional(Tags),
    },
    { additionalProperties: false },
  ),
  output: Job,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(deps, input, ctx) {
    const idempotencyKey = checkedKey(input.idempotency_key);
    // As over HTTP, a model with an endpoint of its own (style training) is not a generation model.
    const route = deps.catalog.get(input.model)?.route;
    if (route) throw invalid(`model '${input.model}' is not generated here; use the tool that calls ${route} (train_style)`);
    // POST /mcp is not refused at the door while the disk cannot take writes (reads go on); this is.
    await deps.readiness.assertCanStore();
    const created = await deps.generation.create(
      {
        model: input.model,
        body: input.input,
        caller: ctx.caller,
        options: { webhookUrl: input.webhook_url ?? null, zeroDataRetention: input.zero_data_retention ?? false, idempotencyKey, requestId: ctx.requestId ?? null, tags: input.tags ?? [] },
      },
      { allowPrivateUrls: deps.allowPrivateUrls, publicUrl: ctx.publicUrl, labels: LABELS },
    );
    return jobAnswer(deps, ctx, created, input.wait_seconds ?? 0);
  },
});
