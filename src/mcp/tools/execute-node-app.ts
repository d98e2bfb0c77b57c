import { Type } from '@sinclair/typebox';
import { Job } from '../../services/common/job-view.js';
import { defineTool } from '../tool.js';
import { IdempotencyKey, LABELS, Tags, WaitSeconds, WebhookUrl, checkedKey, jobAnswer } from './job-options.js';

export const executeNodeApp = defineTool({
  name: 'execute_node_app',
  title: 'Execute a node app',
  description:
    "Runs a published node-app version's graph as one job, as POST /node-apps/{id}/execute does, and returns that job (one job object, " +
    "not the HTTP API's array of one). `inputs` are the app's inputs, checked against the version's input schema. The steps run " +
    'inside the job (they are not jobs of their own); once completed, `result.urls` maps each output name to its URL. With ' +
    'wait_seconds (up to 60) the call waits for the job; otherwise poll get_job. The summed price of the steps is held at once and ' +
    'charged on completion. A version without a graph, bad inputs, insufficient balance and too many jobs come back as tool errors ' +
    'with the HTTP message.',
  input: Type.Object(
    {
      node_app_version_id: Type.String({
        description: 'The node-app version to run (UUID): node_app_version_id in GET /node-apps/{id}/versions',
        examples: ['6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b'],
      }),
      inputs: Type.Record(Type.String(), Type.Unknown(), {
        description: "The app's inputs, as the version's input_openapi_schema describes them",
        examples: [{ prompt: 'A lighthouse on a cliff at dusk', motion: 'slow push-in, waves crashing' }],
      }),
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
    const idempotencyKey = checkedKey(input.idempotency_key);
    await deps.readiness.assertCanStore();
    const created = await deps.nodeAppExecution.execute(
      {
        versionId: input.node_app_version_id,
        body: input.inputs,
        caller: ctx.caller,
        options: { webhookUrl: input.webhook_url ?? null, zeroDataRetention: false, idempotencyKey, requestId: ctx.requestId ?? null, tags: input.tags ?? [] },
      },
      { allowPrivateUrls: deps.allowPrivateUrls, publicUrl: ctx.publicUrl, labels: LABELS },
    );
    return jobAnswer(deps, ctx, created, input.wait_seconds ?? 0);
  },
});
