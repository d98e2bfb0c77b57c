import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { msToMicros } from '../../src/lib/time.js';
import type { TestApp } from './app.js';
import { checkedInject } from './checked-inject.js';

export const OWNER = 'owner@localhost';

/** The example: an image, then a video that starts on it. */
export const IMAGE_THEN_VIDEO = {
  steps: [
    { id: 'img', model: 'image/vendor-a/model-a-2/medium', input: { prompt: '{{inputs.prompt}}', aspect_ratio: '16:9', resolution: '1K' } },
    { id: 'vid', model: 'video/vendor-e/model-e-1', input: { start_image: '{{steps.img.urls[0]}}', prompt: '{{inputs.motion}}' } },
  ],
  outputs: { image: '{{steps.img.urls[0]}}', video: '{{steps.vid.urls[0]}}' },
};

/** $0.03 for the image (model-a-2 medium) and 5 s of model-e-1 std at $0.0221 a second. */
export const IMAGE_THEN_VIDEO_PRICE = 30_000 + 5 * 22_100;

export const PROMPT_INPUTS = {
  type: 'object',
  properties: {
    prompt: { type: 'string', minLength: 1, description: 'What the picture shows' },
    motion: { type: 'string', default: 'slow push-in', description: 'How the camera moves' },
  },
  required: ['prompt'],
  additionalProperties: false,
};

const OUTPUTS = { type: 'object', properties: { image: { type: 'string' }, video: { type: 'string' } }, required: [] };

/**
 * A node app in the workspace and a version of it carrying `graph` (or none), written through the
 * store as a publish would; returns the version's id (what execute takes).
 */
export async function publishGraph(
  t: TestApp,
  graph: Record<string, unknown> | null,
  opts: { name?: string; inputSchema?: Record<string, unknown>; workspaceId?: string } = {},
): Promise<{ versionId: string; nodeAppId: string; slug: string }> {
  const app = await t.services.nodeApps.create({ workspace: opts.workspaceId ?? t.workspaceId, name: opts.name ?? `Clip maker ${newId().slice(0, 8)}`, asEmail: OWNER });
  const published = await t.store.nodeApps.publishVersion(
    { id: newId(), nodeAppId: app.id, inputSchema: opts.inputSchema ?? PROMPT_INPUTS, outputSchema: OUTPUTS, exampleOutputs: [], publishedBy: OWNER, graph },
    msToMicros(t.clock.nowMs()),
  );
  return { versionId: published!.version.id, nodeAppId: app.id, slug: app.slug };
}

/** POST /node-apps/{id}/execute, checked against the route's declared answers. */
export function execute(t: TestApp, versionId: string, body: unknown, headers: Record<string, string> = {}, token = t.token): Promise<LightMyRequestResponse> {
  return checkedInject(t.app, {
    method: 'POST',
    url: `/node-apps/${versionId}/execute`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
}

/** Executes and returns the created job's id, asserting the original API's answer: an array of one pending job. */
export async function executed(t: TestApp, versionId: string, body: unknown, headers: Record<string, string> = {}): Promise<string> {
  const res = await execute(t, versionId, body, headers);
  expect(res.statusCode, res.body).toBe(200);
  const jobs = res.json() as Array<{ job_id: string; status: string; completed_at: null; result: null }>;
  expect(jobs).toHaveLength(1);
  expect(jobs[0]).toMatchObject({ status: 'queued', completed_at: null, result: null });
  return jobs[0]!.job_id;
}

const KIND_ORDER = ['hold', 'charge', 'release'];

/** The ledger entries of one job with their amounts: the hold first, then its end. */
export async function ledgerOf(t: TestApp, jobId: string): Promise<Array<{ kind: string; amount: number }>> {
  const entries = await t.store.billing.listEntries(t.workspaceId);
  return entries
    .filter((e) => e.jobId === jobId)
    .map((e) => ({ kind: e.kind, amount: e.amountMicros }))
    .sort((x, y) => KIND_ORDER.indexOf(x.kind) - KIND_ORDER.indexOf(y.kind));
}
