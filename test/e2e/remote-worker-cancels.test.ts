import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeReplicate } from '../providers/fakes/fake-replicate.js';
import type { FakeReplicate } from '../providers/fakes/fake-replicate.js';
import { FakeComfyui } from '../engines/fakes/fake-comfyui.js';
import { adminJson, api, cleanup, startServer, tempDir } from './binary.js';
import { startRemoteWorker, stopProcesses } from './processes.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/comfyui/', import.meta.url));
const MODEL = 'image/vendor-b/model-b-1';
const COMFY_MODEL = 'image/comfy/sdxl';
/** A short lease: the worker hears of a cancel at its next heartbeat, a third of the lease away. */
const LEASE = ['--lease-ms', '1500'];
/** The shortest job timeout a config may give. */
const TIMEOUT_MS = 3000;

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

/** A server binding `model` to the remote pool gpu-a, and a worker token for it. */
async function serverFor(config: Record<string, unknown>) {
  const dir = tempDir();
  const file = join(dir, 'server.json');
  writeFileSync(file, JSON.stringify(config));
  const server = await startServer(['--port', '0', '--data-dir', dir, '--config', file, '--poll-interval-ms', '100', ...LEASE]);
  const [, apiToken] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  const { token } = await adminJson<{ token: string }>(dir, ['worker-token', 'create', '--name', 'box', '--models', 'image/*']);
  return { url: server.url, apiToken: apiToken!, workerToken: token };
}

async function create(server: { url: string; apiToken: string }, model: string, body: Record<string, unknown>): Promise<string> {
  const created = await api(server.url, `/generate/${model}`, server.apiToken, { method: 'POST', body });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.job_id as string;
}

const jobOf = async (server: { url: string; apiToken: string }, id: string) => (await api(server.url, `/jobs/${id}`, server.apiToken)).body as { status?: string; error?: { code?: string } };

/**
 * Under `mediagen remote-worker --config`, the work a job holds at a provider or ComfyUI is given
 * up there when the job is: cancelled, deleted, or out of time. The remote harness stops the
 * engine with the same RunStopped the in-process runner does, so the engine's cancel reaches the
 * upstream (issue 39: before, it stopped runs with a stop of its own that the engines ignored).
 */
describe('mediagen remote-worker --config gives up upstream work with its job (compiled binary)', { timeout: 90_000 }, () => {
  let rep: FakeReplicate;
  beforeAll(async () => {
    rep = await startFakeReplicate();
    rep.hold = true;
  });
  afterAll(() => rep?.close());
  afterEach(async () => {
    await stopProcesses();
    await cleanup();
  });

  /** A remote worker running MODEL at the fake Replicate. */
  async function replicateWorker(server: { url: string; workerToken: string }) {
    const file = join(tempDir(), 'worker.json');
    writeFileSync(
      file,
      JSON.stringify({
        providers: { rep: { type: 'replicate', base_url: rep.url, api_key_env: 'REP_TEST_TOKEN', poll_interval_ms: 50 } },
        model_engines: { [MODEL]: 'provider:rep' },
        upstream: { [MODEL]: { model: 'owner/held-model', input: { prompt: '{{prompt}}' } } },
      }),
    );
    return startRemoteWorker(['--server', server.url, '--pool', 'gpu-a', '--config', file, '--models', MODEL], server.workerToken, { REP_TEST_TOKEN: rep.token });
  }

  /** The prediction made for the job with this prompt, once the worker has submitted it. */
  async function predictionFor(prompt: string): Promise<string> {
    let id: string | undefined;
    await until(`the prediction for '${prompt}'`, () => (id = [...rep.predictions.values()].find((p) => p.input.prompt === prompt)?.id) !== undefined);
    return id!;
  }

  it('a cancelled job and a deleted job have their predictions cancelled at the provider', async () => {
    const server = await serverFor({ model_engines: { [MODEL]: 'remote:gpu-a' } });
    await replicateWorker(server);

    const cancelled = await create(server, MODEL, { prompt: 'cancel me' });
    const first = await predictionFor('cancel me');
    await until('the job to run', async () => (await jobOf(server, cancelled)).status === 'sampling');
    const answer = await api(server.url, `/jobs/${cancelled}/cancel`, server.apiToken, { method: 'POST' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    await until('the prediction to be cancelled at the provider', () => rep.cancels.includes(first));

    const deleted = await create(server, MODEL, { prompt: 'delete me' });
    const second = await predictionFor('delete me');
    await until('the job to run', async () => (await jobOf(server, deleted)).status === 'sampling');
    expect((await api(server.url, `/jobs/${deleted}`, server.apiToken, { method: 'DELETE' })).status).toBe(200);
    await until('the prediction to be cancelled at the provider', () => rep.cancels.includes(second));
    expect(rep.submissions()).toBe(2);
  });

  it('a job past its deadline fails with timeout and its prediction is cancelled at the provider', async () => {
    const server = await serverFor({ model_engines: { [MODEL]: 'remote:gpu-a' }, job_timeouts_ms: { [MODEL]: TIMEOUT_MS } });
    await replicateWorker(server);
    const id = await create(server, MODEL, { prompt: 'too slow' });
    const prediction = await predictionFor('too slow');
    await until('the prediction to be cancelled at the provider', () => rep.cancels.includes(prediction));
    await until('the job to fail', async () => (await jobOf(server, id)).status === 'failed');
    expect((await jobOf(server, id)).error?.code).toBe('timeout');
  });

  /** A server and a remote worker running the ComfyUI example model on `comfy`. */
  async function comfyRun(comfy: FakeComfyui, timeoutMs?: number) {
    const example = JSON.parse(readFileSync(join(EXAMPLES, 'mediagen.json'), 'utf8')) as { models: Array<Record<string, unknown> & { path: string; upstream: Record<string, unknown> }> };
    const sdxl = example.models.find((m) => m.path === COMFY_MODEL)!;
    const { upstream: _upstream, ...declared } = sdxl;
    const server = await serverFor({ models: [{ ...declared, engine: 'remote:gpu-a', ...(timeoutMs ? { timeout_ms: timeoutMs } : {}) }] });
    const file = join(tempDir(), 'worker.json');
    const workflow = join(EXAMPLES, sdxl.upstream.workflow as string);
    writeFileSync(file, JSON.stringify({ comfyui: { gpu: { base_url: comfy.baseUrl, poll_interval_ms: 100 } }, models: [{ ...sdxl, upstream: { ...sdxl.upstream, workflow } }] }));
    await startRemoteWorker(['--server', server.url, '--pool', 'gpu-a', '--config', file], server.workerToken);
    return server;
  }

  it("a cancelled job's prompt is deleted from ComfyUI's queue", async () => {
    const comfy = await new FakeComfyui({ holdQueue: true }).start();
    try {
      const server = await comfyRun(comfy);
      const id = await create(server, COMFY_MODEL, { prompt: 'a lighthouse' });
      await until('the prompt to be queued at ComfyUI', () => comfy.pending.length === 1);
      const promptId = comfy.pending[0]![1];
      expect((await api(server.url, `/jobs/${id}/cancel`, server.apiToken, { method: 'POST' })).status).toBe(200);
      await until('the prompt to be deleted from the queue', () => comfy.deletes.includes(promptId));
      expect(comfy.pending).toEqual([]);
    } finally {
      await comfy.close();
    }
  });

  it("a job past its deadline fails with timeout and its running prompt is interrupted at ComfyUI", async () => {
    const comfy = await new FakeComfyui({ holdRunning: true }).start();
    try {
      const server = await comfyRun(comfy, TIMEOUT_MS);
      const id = await create(server, COMFY_MODEL, { prompt: 'a lighthouse' });
      await until('the prompt to run at ComfyUI', () => comfy.running !== undefined);
      const promptId = comfy.running![1];
      await until('the prompt to be interrupted', () => comfy.interrupts.includes(promptId));
      await until('the job to fail', async () => (await jobOf(server, id)).status === 'failed');
      expect((await jobOf(server, id)).error?.code).toBe('timeout');
    } finally {
      await comfy.close();
    }
  });
});
