import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagen, outputUrls } from '../../packages/client/src/index.js';
import { adminJson, cleanup, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';

const OWNER = 'owner@localhost';
const INPUT = { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] };
const OUTPUT = { type: 'object', properties: { image: { type: 'string', format: 'uri' } }, required: ['image'] };
const ONE_STEP = {
  steps: [{ id: 'img', model: 'image/vendor-a/model-a-2/medium', input: { prompt: '{{inputs.prompt}}', aspect_ratio: '1:1', resolution: '1K' } }],
  outputs: { image: '{{steps.img.urls[0]}}' },
};

async function tokenOf(server: Server): Promise<string> {
  const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  return token!;
}

/** A node app with a one-step graph in the bootstrap workspace of the store in `dir`; its version's id. */
async function publish(dir: string): Promise<string> {
  const { node_app_id: app } = await adminJson<{ node_app_id: string }>(dir, ['node-app', 'create', '--workspace', 'default', '--name', 'Card maker', '--as', OWNER]);
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  const published = await adminJson<{ node_app_version_id: string }>(dir, [
    'node-app', 'publish', '--node-app', app, '--input-schema', file('input.json', INPUT), '--output-schema', file('output.json', OUTPUT), '--graph', file('graph.json', ONE_STEP), '--as', OWNER,
  ]);
  return published.node_app_version_id;
}

/**
 * `styles.train` and `nodeApps.execute` against the compiled server: the same waits, keys and
 * signal as `generate`, on a server that runs jobs and on one (`--role api`) whose jobs stay queued.
 */
describe('the typed client creates training jobs and node-app runs on the real server', { timeout: 120_000 }, () => {
  let runs: Mediagen;
  let queues: Mediagen;
  let runsVersion: string;
  let queuesVersion: string;
  let image: string;
  const posts: { url: string; prefer: string | null; key: string | null }[] = [];

  beforeAll(async () => {
    const runsDir = tempDir();
    const queuesDir = tempDir();
    const worker = await startServer(['--port', '0', '--data-dir', runsDir, '--engine-latency-ms', '100']);
    const api = await startServer(['--port', '0', '--data-dir', queuesDir, '--role', 'api']);
    const recording: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      if (init?.method === 'POST') posts.push({ url: String(input), prefer: headers.get('prefer'), key: headers.get('idempotency-key') });
      return fetch(input, init);
    };
    runs = new Mediagen({ baseUrl: worker.url, token: await tokenOf(worker), fetch: recording });
    queues = new Mediagen({ baseUrl: api.url, token: await tokenOf(api), fetch: recording });
    [runsVersion, queuesVersion] = await Promise.all([publish(runsDir), publish(queuesDir)]);
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#c04020' } }).png().toBuffer();
    image = `data:image/png;base64,${png.toString('base64')}`;
  });
  afterAll(cleanup);

  it('styles.train with wait returns the completed training job as GET shows it, waited in the POST', async () => {
    posts.length = 0;
    const job = await runs.styles.train({ name: 'Rust red', urls: [image] }, { wait: true });
    expect(job).toMatchObject({ type: 'loraTraining', status: 'completed' });
    expect(job.result).toMatchObject({ style_id: expect.any(String) });
    expect(job).toEqual(await runs.jobs.get(job.job_id));
    expect(posts).toEqual([{ url: `${runs.baseUrl}/styles/train`, prefer: 'wait=60', key: expect.stringMatching(/^mgc-/) }]);
  });

  it('styles.train without wait answers the queued job; the same idempotencyKey answers the same job', async () => {
    const job = await queues.styles.train({ name: 'Rust red', urls: [image] }, { idempotencyKey: 'train-1' });
    expect(job).toMatchObject({ type: 'loraTraining', status: 'queued' });
    expect(Object.keys(job)).not.toContain('completed_at');
    expect((await queues.styles.train({ name: 'Rust red', urls: [image] }, { idempotencyKey: 'train-1' })).job_id).toBe(job.job_id);
    expect((await queues.styles.train({ name: 'x', urls: [image] }, { wait: 0.5 })).status).toBe('queued');
  });

  it('nodeApps.execute with wait returns the one job of the answer, completed with its named outputs', async () => {
    posts.length = 0;
    const updates: string[] = [];
    const job = await runs.nodeApps.execute(runsVersion, { prompt: 'a red card' }, { wait: true, onUpdate: (j) => updates.push(j.status) });
    expect(Array.isArray(job)).toBe(false);
    expect(job).toMatchObject({ status: 'completed' });
    expect(updates.at(-1)).toBe('completed');
    expect(job).toEqual(await runs.jobs.get(job.job_id));
    expect(Object.keys(job.result!.urls as object)).toEqual(['image']);
    expect(outputUrls(job)).toHaveLength(1);
    expect(posts).toEqual([{ url: `${runs.baseUrl}/node-apps/${runsVersion}/execute`, prefer: null, key: expect.stringMatching(/^mgc-/) }]);

    const waited = await runs.nodeApps.execute(runsVersion, { prompt: 'a blue card' }, { wait: true });
    expect(waited.status).toBe('completed');
    expect(posts[1]).toMatchObject({ prefer: 'wait=60' });
  });

  it('nodeApps.execute without wait answers the queued job; keys, refusals and signals as generate', async () => {
    const job = await queues.nodeApps.execute(queuesVersion, { prompt: 'a card' }, { idempotencyKey: 'run-1' });
    expect(job).toMatchObject({ status: 'queued' });
    expect(Object.keys(job)).not.toContain('result');
    expect((await queues.nodeApps.execute(queuesVersion, { prompt: 'a card' }, { idempotencyKey: 'run-1' })).job_id).toBe(job.job_id);
    await expect(queues.nodeApps.execute(queuesVersion, {})).rejects.toMatchObject({ status: 400 });
    const stop = new AbortController();
    // Aborted once the job exists: the wait stops, the job stays queued on the server.
    const waiting = queues.nodeApps.execute(queuesVersion, { prompt: 'a card' }, { wait: true, signal: stop.signal, onUpdate: () => stop.abort(new Error('enough')) });
    await expect(waiting).rejects.toThrow('enough');
  });
});
