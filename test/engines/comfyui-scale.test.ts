import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readComfyWorkflow } from '../../src/engines/comfyui/comfyui-binding.js';
import { EngineError, RunStopped } from '../../src/engines/engine.js';
import type { UpstreamState } from '../../src/engines/engine.js';
import { comfyContext, comfyEngine } from './comfyui-harness.js';
import { TempDirs } from './engine-harness.js';
import { FakeComfyui } from './fakes/fake-comfyui.js';
import type { FakeComfyOptions } from './fakes/fake-comfyui.js';

/**
 * ComfyUI at the size people use it: prompts queued from its web UI carry their whole UI workflow,
 * so 210 of them make a `/queue` of about 21 MiB and 256 finished ones a `/history` of 25 MiB; and
 * ComfyUI before 2024-01-11, whose history entries have no `status`.
 */

const examples = resolve(dirname(fileURLToPath(import.meta.url)), '../../examples/comfyui');
const config = JSON.parse(await readFile(join(examples, 'mediagen.json'), 'utf8')) as { models: Array<{ upstream: { workflow: unknown; inputs: unknown } }> };
const textToImage = readComfyWorkflow({ workflow: config.models[0]!.upstream.workflow, inputs: config.models[0]!.upstream.inputs }, 'models[0].upstream', examples);

const dirs = new TempDirs();
const fakes: FakeComfyui[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
  await dirs.cleanup();
});

async function fake(opts: FakeComfyOptions = {}): Promise<FakeComfyui> {
  const f = await new FakeComfyui(opts).start();
  fakes.push(f);
  return f;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error('condition not reached');
}

async function failure(p: Promise<unknown>): Promise<EngineError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

const job = { id: 'job-1', model: 'image/comfy/sdxl', request: { prompt: 'x' } };
const WEB_UI_QUEUE = 210;
const WEB_UI_HISTORY = 256;

describe('ComfyUI engine with a web-UI-sized queue and history', { timeout: 60_000 }, () => {
  it('a cancel removes its queued prompt from behind 210 web-UI prompts (21 MiB of /queue)', async () => {
    const comfy = await fake({ websocket: true, holdQueue: true });
    comfy.addWebUiPrompts(WEB_UI_QUEUE, 'pending');
    const ctx = comfyContext(await dirs.make());
    const run = comfyEngine(comfy.baseUrl, textToImage).run(job, ctx);
    await until(() => comfy.pending.length === WEB_UI_QUEUE + 1);
    const id = comfy.pending.at(-1)![1];
    ctx.controller.abort(new RunStopped('cancelled'));
    await expect(run).rejects.toBeInstanceOf(RunStopped);
    await until(() => comfy.interrupts.length > 0);
    expect(comfy.deletes).toEqual([id]);
    expect(comfy.pending.map((p) => p[1])).not.toContain(id);
    expect(comfy.pending).toHaveLength(WEB_UI_QUEUE);
    // Deleted first, unread: the cancel never asked for the queue.
    expect(comfy.requests.filter((r) => r.startsWith('POST /queue') || r.startsWith('POST /interrupt') || r === 'GET /queue')).toEqual(['POST /queue', 'POST /interrupt']);
  });

  it('a timeout interrupts its running prompt by id while 210 web-UI prompts wait behind it', async () => {
    const comfy = await fake({ websocket: true, holdRunning: true });
    const ctx = comfyContext(await dirs.make());
    const run = comfyEngine(comfy.baseUrl, textToImage).run(job, ctx);
    await until(() => comfy.running !== undefined);
    const id = comfy.running![1];
    comfy.addWebUiPrompts(WEB_UI_QUEUE, 'pending');
    ctx.controller.abort(new RunStopped('timeout'));
    await expect(run).rejects.toBeInstanceOf(RunStopped);
    await until(() => comfy.history.has(id));
    expect(comfy.interrupts).toEqual([id]);
    expect(comfy.history.get(id)).toMatchObject({ status: { status_str: 'error' } });
  });

  it('an old ComfyUI (interrupt takes no id): interrupts its running prompt because the socket saw it start, never a web-UI prompt', async () => {
    const comfy = await fake({ websocket: true, holdRunning: true, oldInterrupt: true });
    const ctx = comfyContext(await dirs.make());
    const run = comfyEngine(comfy.baseUrl, textToImage).run(job, ctx);
    await until(() => comfy.running !== undefined && ctx.fractions.length > 0);
    const id = comfy.running![1];
    comfy.addWebUiPrompts(WEB_UI_QUEUE, 'pending');
    ctx.controller.abort(new RunStopped('cancelled'));
    await expect(run).rejects.toBeInstanceOf(RunStopped);
    await until(() => comfy.history.has(id));
    expect(comfy.interrupts).toEqual([undefined]);
    expect(comfy.history.get(id)).toMatchObject({ status: { status_str: 'error' } });

    // Our prompt queued behind a running web-UI prompt: deleted, and the web-UI prompt left running.
    const other = await fake({ websocket: true, holdQueue: true, holdRunning: true, oldInterrupt: true });
    other.addWebUiPrompts(WEB_UI_QUEUE, 'pending');
    other.run();
    await until(() => other.running !== undefined);
    const mine = comfyContext(await dirs.make());
    const queued = comfyEngine(other.baseUrl, textToImage).run(job, mine);
    await until(() => other.pending.length === WEB_UI_QUEUE);
    const ours = other.pending.at(-1)![1];
    mine.controller.abort(new RunStopped('cancelled'));
    await expect(queued).rejects.toBeInstanceOf(RunStopped);
    await until(() => other.deletes.length > 0 && other.requests.includes('GET /queue'));
    await new Promise((r) => setTimeout(r, 200));
    expect(other.deletes).toEqual([ours]);
    expect(other.interrupts).toEqual([]);
    expect(other.running![3].client_id).toBe('web-ui-browser');
  });

  it('follows its prompt by polling /queue and /history with 210 web-UI prompts queued behind it', async () => {
    const comfy = await fake({ websocket: false, holdQueue: true });
    const ctx = comfyContext(await dirs.make());
    const run = comfyEngine(comfy.baseUrl, textToImage, { pollIntervalMs: 100 }).run(job, ctx);
    await until(() => comfy.pending.length === 1);
    comfy.addWebUiPrompts(WEB_UI_QUEUE, 'pending');
    await until(() => comfy.requests.filter((r) => r === 'GET /queue').length >= 2);
    comfy.run();
    expect((await run).map((o) => o.name)).toEqual(['output.png']);
    expect(comfy.pending).toHaveLength(WEB_UI_QUEUE);
  });

  it('a resumed job whose prompt never reached ComfyUI posts it, with 256 web-UI prompts in the history (25 MiB)', async () => {
    const comfy = await fake({ websocket: true });
    comfy.addWebUiPrompts(WEB_UI_HISTORY, 'history');
    // The first run stored its ids, then died before its POST /prompt.
    const store: UpstreamState[] = [{ engine: 'comfyui:gpu', id: 'b7a0f7e4-5f7e-4f61-9d6c-1f0f2f4b8a11', state: { promptId: 'b7a0f7e4-5f7e-4f61-9d6c-1f0f2f4b8a11', clientId: '0d3c1b1e-9a0e-4c3f-8e55-0b6a7f7e2c42' } }];
    const ctx = comfyContext(await dirs.make(), {}, store);
    expect((await comfyEngine(comfy.baseUrl, textToImage).run(job, ctx)).map((o) => o.name)).toEqual(['output.png']);
    expect(comfy.requests).toContain(`GET /history?max_items=${WEB_UI_HISTORY}`);
    expect(comfy.prompts).toHaveLength(1);
    expect(comfy.prompts[0]!.prompt_id).toBe('b7a0f7e4-5f7e-4f61-9d6c-1f0f2f4b8a11');
  });

  it('a resumed job finds its prompt among 256 web-UI history entries by its client id when the old ComfyUI renamed it', async () => {
    const comfy = await fake({ websocket: true, promptIds: 'mint' });
    comfy.addWebUiPrompts(WEB_UI_HISTORY - 56, 'history');
    const first = comfyContext(await dirs.make());
    await comfyEngine(comfy.baseUrl, textToImage).run(job, first);
    const minted = [...comfy.history.keys()].at(-1)!;
    // ComfyUI keeps running the web UI's prompts meanwhile: ours is the 56th newest of 256.
    comfy.addWebUiPrompts(55, 'history');
    // As if the run had stopped before storing the id ComfyUI minted.
    const store: UpstreamState[] = [first.saved[0]!];
    const second = comfyContext(await dirs.make(), {}, store);
    expect((await comfyEngine(comfy.baseUrl, textToImage).run(job, second)).map((o) => o.name)).toEqual(['output.png']);
    expect(comfy.prompts).toHaveLength(1);
    expect(store.at(-1)).toMatchObject({ id: minted, state: { minted: true } });
  });
});

describe('ComfyUI engine remembers whether ComfyUI kept its prompt id', () => {
  it('stores kept when ComfyUI answers with its own id, minted when it answers with another', async () => {
    for (const [mode, flag] of [['duplicates', 'kept'], ['mint', 'minted']] as const) {
      const comfy = await fake({ websocket: true, promptIds: mode });
      const ctx = comfyContext(await dirs.make());
      await comfyEngine(comfy.baseUrl, textToImage).run(job, ctx);
      expect(ctx.saved.at(-1)).toMatchObject({ id: [...comfy.history.keys()][0], state: { [flag]: true } });
    }
  });

  it('a resumed job whose id ComfyUI kept looks it up by id only: no client-id scan of the history', async () => {
    const comfy = await fake({ websocket: true });
    // ComfyUI had the prompt, then restarted (its queue and history live in memory): the prompt is gone.
    const state = { promptId: 'f1c7d6a2-3b4e-4c5d-8e6f-7a8b9c0d1e2f', clientId: '2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6b' };
    const kept: UpstreamState[] = [{ engine: 'comfyui:gpu', id: state.promptId, state: { ...state, kept: true } }];
    await comfyEngine(comfy.baseUrl, textToImage).run(job, comfyContext(await dirs.make(), {}, kept));
    const lookups = comfy.requests.filter((r) => r.startsWith('GET /queue') || r.startsWith('GET /history'));
    expect(lookups.slice(0, 2)).toEqual(['GET /queue', `GET /history/${state.promptId}`]);
    expect(comfy.requests.some((r) => r.startsWith('GET /history?'))).toBe(false);
    expect(comfy.prompts.map((p) => p.prompt_id)).toEqual([state.promptId]);

    // Without the flag (stopped before ComfyUI answered) the client-id scan runs.
    const unknown = await fake({ websocket: true });
    await comfyEngine(unknown.baseUrl, textToImage).run(job, comfyContext(await dirs.make(), {}, [{ ...kept[0]!, state }]));
    expect(unknown.requests.some((r) => r.startsWith('GET /history?max_items='))).toBe(true);
  });
});

describe('ComfyUI before 2024-01-11 (history entries without status)', () => {
  const exception = { node_id: '3', node_type: 'KSampler', exception_type: 'RuntimeError', exception_message: 'mat1 and mat2 shapes cannot be multiplied (77x768 and 1280x320)' };

  it("a node exception is upstream_failed with the node's message, though the history entry shows the end before the socket's error", async () => {
    const comfy = await fake({ websocket: true, statusless: true, executionError: exception, socketDelayMs: 150 });
    const err = await failure(comfyEngine(comfy.baseUrl, textToImage, { pollIntervalMs: 20 }).run(job, comfyContext(await dirs.make())));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toContain('KSampler (node 3) failed: mat1 and mat2 shapes cannot be multiplied');
  });

  it('without a socket, a prompt that ended with no output file is upstream_failed, not malformed', async () => {
    const comfy = await fake({ websocket: false, statusless: true, executionError: exception });
    const err = await failure(comfyEngine(comfy.baseUrl, textToImage).run(job, comfyContext(await dirs.make())));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toContain('ended without an output file');
  });

  it('a prompt that succeeded completes, with and without the socket', async () => {
    for (const websocket of [true, false]) {
      const comfy = await fake({ websocket, statusless: true, socketDelayMs: 50 });
      expect((await comfyEngine(comfy.baseUrl, textToImage).run(job, comfyContext(await dirs.make()))).map((o) => o.name)).toEqual(['output.png']);
    }
  });
});
