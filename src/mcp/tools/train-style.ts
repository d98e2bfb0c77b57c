import { Type } from '@sinclair/typebox';
import { LORA_TRAINING_PATH, StyleTrainingRequest } from '../../models/style/lora-training.js';
import { Job } from '../../services/common/job-view.js';
import { defineTool } from '../tool.js';
import { IdempotencyKey, LABELS, Tags, WaitSeconds, WebhookUrl, checkedKey, jobAnswer } from './job-options.js';

/** The training request's fields as this tool's own arguments, beside the job options. */
export const trainStyle = defineTool({
  name: 'train_style',
  title: 'Train a style',
  description:
    'Trains a style (LoRA) from 1 to 50 images, as POST /styles/train does: creates a job of type loraTraining and returns it. `urls` ' +
    'are the training images (upload_asset image_urls, public http(s) URLs or data URIs); `model` is the base model the style is ' +
    'for (default flux_dev). With wait_seconds (up to 60) the call waits for the job; once completed, `result.style_id` names the ' +
    'new style (use it in `styles` of a generate input; list_styles lists it) and `result.urls` holds its cover image. Otherwise ' +
    'poll get_job. Priced per training step; a completed job is charged. Refusals come back as tool errors with the HTTP message.',
  input: Type.Object(
    {
      ...StyleTrainingRequest.properties,
      webhook_url: Type.Optional(WebhookUrl),
      wait_seconds: Type.Optional(WaitSeconds),
      idempotency_key: Type.Optional(IdempotencyKey),
      tags: Type.Optional(Tags),
    },
    { additionalProperties: false },
  ),
  output: Job,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(deps, input, ctx) {
    const { webhook_url: webhookUrl, wait_seconds: wait, idempotency_key: key, tags, ...body } = input;
    const idempotencyKey = checkedKey(key);
    await deps.readiness.assertCanStore();
    const created = await deps.generation.create(
      { model: LORA_TRAINING_PATH, body, caller: ctx.caller, options: { webhookUrl: webhookUrl ?? null, zeroDataRetention: false, idempotencyKey, requestId: ctx.requestId ?? null, tags: tags ?? [] } },
      { allowPrivateUrls: deps.allowPrivateUrls, publicUrl: ctx.publicUrl, labels: LABELS },
    );
    return jobAnswer(deps, ctx, created, wait ?? 0);
  },
});
