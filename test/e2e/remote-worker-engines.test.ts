import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isPng } from '../helpers/media.js';
import { startFakeOpenAi } from '../providers/fakes/fake-openai.js';
import type { FakeOpenAi } from '../providers/fakes/fake-openai.js';
import { adminJson, api, cleanup, startServer, tempDir } from './binary.js';
import { startRemoteWorker, stopProcesses } from './processes.js';
import { FIXTURES } from '../engines/command-fixtures.js';
import { FakeComfyui } from '../engines/fakes/fake-comfyui.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/comfyui/', import.meta.url));

const MODEL = 'image/vendor-b/model-b-1';

/**
 * `mediagen remote-worker --config FILE` runs the engines its file names (docs/engines.md): here a
 * hosted provider (a fake OpenAI Images API) for a server that binds the model to a remote pool.
 */
describe('mediagen remote-worker --config (compiled binary)', { timeout: 90_000 }, () => {
  let oai: FakeOpenAi;
  beforeAll(async () => {
    oai = await startFakeOpenAi();
  });
  afterAll(() => oai?.close());
  afterEach(async () => {
    await stopProcesses();
    await cleanup();
  });

  it("runs a pool's job at the provider its own config binds the model to, the key from its environment", async () => {
    const dir = tempDir();
    const serverConfig = join(dir, 'server.json');
    writeFileSync(serverConfig, JSON.stringify({ model_engines: { [MODEL]: 'remote:gpu-a' } }));
    const server = await startServer(['--port', '0', '--data-dir', dir, '--config', serverConfig, '--poll-interval-ms', '100']);
    const [, apiToken] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    const { token } = await adminJson<{ token: string }>(dir, ['worker-token', 'create', '--name', 'provider-box', '--models', 'image/*']);

    const workerConfig = join(tempDir(), 'worker.json');
    writeFileSync(
      workerConfig,
      JSON.stringify({
        providers: { oai: { type: 'openai', base_url: oai.url, api_key_env: 'OAI_TEST_KEY', poll_interval_ms: 50 } },
        model_engines: { [MODEL]: 'provider:oai' },
        upstream: { [MODEL]: { model: 'gpt-image-1', input: { prompt: '{{prompt}}', size: '1024x1024' } } },
      }),
    );
    const worker = await startRemoteWorker(['--server', server.url, '--pool', 'gpu-a', '--config', workerConfig, '--models', MODEL], token, { OAI_TEST_KEY: oai.apiKey });

    const created = await api(server.url, `/generate/${MODEL}`, apiToken!, { method: 'POST', body: { prompt: 'a red fox' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.job_id as string;
    let job: { status?: string; result?: { urls: string[] } } = {};
    for (const until = Date.now() + 60_000; Date.now() < until && !['completed', 'failed'].includes(job.status ?? ''); await new Promise((r) => setTimeout(r, 100))) {
      job = (await api(server.url, `/jobs/${id}`, apiToken!)).body as typeof job;
    }
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const file = await fetch(job.result!.urls[0]!);
    expect(isPng(Buffer.from(await file.arrayBuffer()))).toBe(true);
    expect(oai.requests.at(-1)!.body).toMatchObject({ model: 'gpt-image-1', prompt: 'a red fox', size: '1024x1024' });
    expect(worker.stdout() + worker.stderr()).not.toContain(oai.apiKey);
  });

  it('runs a custom model on a command engine its config declares, the model process started by the worker', async () => {
    const dir = tempDir();
    const decl = {
      path: 'image/acme/cmd-v1',
      kind: 'image',
      request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 100, description: 'p' }, width: { type: 'integer', minimum: 1, maximum: 64, default: 10, description: 'w' } }, required: ['prompt'] },
      price: { fixed: '0.01' },
    };
    const serverConfig = join(dir, 'server.json');
    writeFileSync(serverConfig, JSON.stringify({ models: [{ ...decl, engine: 'remote:gpu-a' }] }));
    const server = await startServer(['--port', '0', '--data-dir', dir, '--config', serverConfig, '--poll-interval-ms', '100']);
    const [, apiToken] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    const { token } = await adminJson<{ token: string }>(dir, ['worker-token', 'create', '--name', 'cmd-box', '--models', 'image/*']);
    const workerConfig = join(FIXTURES, `worker-${process.pid}-${Date.now()}.json`);
    writeFileSync(workerConfig, JSON.stringify({ commands: { fixture: { argv: ['python3', 'command-server.py'] } }, models: [{ ...decl, engine: 'command:fixture' }] }));
    try {
      await startRemoteWorker(['--server', server.url, '--pool', 'gpu-a', '--config', workerConfig], token);
      const created = await api(server.url, '/generate/image/acme/cmd-v1', apiToken!, { method: 'POST', body: { prompt: 'a fox', width: 10 } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      let job: { status?: string; result?: { urls: string[] } } = {};
      for (const until = Date.now() + 60_000; Date.now() < until && !['completed', 'failed'].includes(job.status ?? ''); await new Promise((r) => setTimeout(r, 100))) {
        job = (await api(server.url, `/jobs/${created.body.job_id as string}`, apiToken!)).body as typeof job;
      }
      expect(job.status, JSON.stringify(job)).toBe('completed');
      const file = Buffer.from(await (await fetch(job.result!.urls[0]!)).arrayBuffer());
      expect(isPng(file)).toBe(true);
    } finally {
      rmSync(workerConfig, { force: true });
    }
  });

  it('runs the ComfyUI example model on a ComfyUI its config declares', async () => {
    const comfy = await new FakeComfyui().start();
    try {
      const example = JSON.parse(readFileSync(join(EXAMPLES, 'mediagen.json'), 'utf8')) as { comfyui: Record<string, Record<string, unknown>>; models: Array<Record<string, unknown> & { upstream: Record<string, unknown> }> };
      const sdxl = example.models.find((m) => m.path === 'image/comfy/sdxl')!;
      const dir = tempDir();
      const serverConfig = join(dir, 'server.json');
      const { upstream: _upstream, ...declared } = sdxl;
      writeFileSync(serverConfig, JSON.stringify({ models: [{ ...declared, engine: 'remote:gpu-a' }] }));
      const server = await startServer(['--port', '0', '--data-dir', dir, '--config', serverConfig, '--poll-interval-ms', '100']);
      const [, apiToken] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
      const { token } = await adminJson<{ token: string }>(dir, ['worker-token', 'create', '--name', 'comfy-box', '--models', 'image/*']);
      const workerConfig = join(tempDir(), 'worker.json');
      const workflow = join(EXAMPLES, sdxl.upstream.workflow as string);
      writeFileSync(workerConfig, JSON.stringify({ comfyui: { gpu: { base_url: comfy.baseUrl, poll_interval_ms: 100 } }, models: [{ ...sdxl, upstream: { ...sdxl.upstream, workflow } }] }));
      await startRemoteWorker(['--server', server.url, '--pool', 'gpu-a', '--config', workerConfig], token);
      const created = await api(server.url, '/generate/image/comfy/sdxl', apiToken!, { method: 'POST', body: { prompt: 'a lighthouse' } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      let job: { status?: string; result?: { urls: string[] } } = {};
      for (const until = Date.now() + 60_000; Date.now() < until && !['completed', 'failed'].includes(job.status ?? ''); await new Promise((r) => setTimeout(r, 100))) {
        job = (await api(server.url, `/jobs/${created.body.job_id as string}`, apiToken!)).body as typeof job;
      }
      expect(job.status, JSON.stringify(job)).toBe('completed');
      expect(isPng(Buffer.from(await (await fetch(job.result!.urls[0]!)).arrayBuffer()))).toBe(true);
      expect(comfy.prompts).toHaveLength(1);
    } finally {
      await comfy.close();
    }
  });
});
