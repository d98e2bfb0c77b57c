import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { readComfyWorkflow } from '../../src/engines/comfyui/comfyui-binding.js';
import type { ComfyWorkflow } from '../../src/engines/comfyui/comfyui-binding.js';
import { EngineError, RunStopped } from '../../src/engines/engine.js';
import type { UpstreamState } from '../../src/engines/engine.js';
import { comfyContext, comfyEngine } from './comfyui-harness.js';
import { TempDirs, solidPng } from './engine-harness.js';
import { FakeComfyui } from './fakes/fake-comfyui.js';
import type { FakeComfyOptions } from './fakes/fake-comfyui.js';

const examples = resolve(dirname(fileURLToPath(import.meta.url)), '../../examples/comfyui');
const config = JSON.parse(await readFile(join(examples, 'mediagen.json'), 'utf8')) as { models: Array<{ path: string; upstream: { workflow: unknown; inputs: unknown; output_nodes?: unknown } }> };
const workflowOf = (i: number): ComfyWorkflow => {
  const u = config.models[i]!.upstream;
  return readComfyWorkflow({ workflow: u.workflow, inputs: u.inputs, outputNodes: u.output_nodes }, `models[${i}].upstream`, examples);
};
const textToImage = workflowOf(0);
const imageToImage = workflowOf(1);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

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
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error('condition not reached');
}

async function failure(p: Promise<unknown>): Promise<EngineError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

const job = (request: Record<string, unknown>) => ({ id: 'job-1', model: 'image/comfy/sdxl', request });

describe('ComfyUI engine', () => {
  it('runs a text-to-image workflow: request values at the mapped inputs, stages and progress from the socket, the SaveImage PNG as output', async () => {
    const comfy = await fake({ websocket: true, promptIds: 'duplicates', steps: 4 });
    const ctx = comfyContext(await dirs.make());
    const outputs = await comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'a red fox', steps: 12, seed: 7 }), ctx);

    expect(comfy.prompts).toHaveLength(1);
    const sent = comfy.prompts[0]!;
    expect(sent.prompt['6']!.inputs.text).toBe('a red fox');
    expect(sent.prompt['3']!.inputs.steps).toBe(12);
    expect(sent.prompt['3']!.inputs.seed).toBe(7);
    expect(sent.prompt['7']!.inputs.text).toBe('blurry, low quality, watermark');
    expect(sent.prompt_id).toMatch(UUID_RE);
    expect(sent.client_id).toMatch(UUID_RE);
    expect(ctx.saved[0]).toMatchObject({ engine: 'comfyui:gpu', id: sent.prompt_id, state: { promptId: sent.prompt_id, clientId: sent.client_id } });
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
    expect(ctx.fractions).toEqual([0.25, 0.5, 0.75, 1]);
    expect(outputs).toEqual([{ name: 'output.png', contentType: 'image/png' }]);
    const meta = await sharp(join(ctx.outDir, 'output.png')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 64, 48]);
  });

  it('uploads an image input with /upload/image and sets the name ComfyUI gives on the LoadImage node', async () => {
    const comfy = await fake({ websocket: true });
    const png = await solidPng(32, 32, '#ff0000');
    const ctx = comfyContext(await dirs.make(), { 'https://cdn.example/in.png': png });
    const engine = comfyEngine(comfy.baseUrl, imageToImage);
    await engine.run(job({ prompt: 'oil', image_url: 'https://cdn.example/in.png', strength: 0.4 }), ctx);

    expect(comfy.uploads).toHaveLength(1);
    expect(comfy.uploads[0]!.bytes.equals(png)).toBe(true);
    expect(comfy.uploads[0]!.name).toBe('mediagen-job-1-1.png');
    expect(comfy.prompts[0]!.prompt['10']!.inputs.image).toBe('mediagen-job-1-1.png');
    expect(comfy.prompts[0]!.prompt['3']!.inputs.denoise).toBe(0.4);
  });

  it('completes by polling /history when ComfyUI has no WebSocket', async () => {
    const comfy = await fake({ websocket: false });
    const ctx = comfyContext(await dirs.make());
    const outputs = await comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'x' }), ctx);
    expect(outputs.map((o) => o.contentType)).toEqual(['image/png']);
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
  });

  it('completes by polling when the WebSocket drops mid-prompt', async () => {
    const comfy = await fake({ websocket: true, holdRunning: true });
    const ctx = comfyContext(await dirs.make());
    const run = comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'x' }), ctx);
    await until(() => comfy.running !== undefined && ctx.fractions.length > 0);
    comfy.dropSockets();
    comfy.release();
    expect((await run).map((o) => o.name)).toEqual(['output.png']);
  });

  for (const mode of ['mint', 'duplicates'] as const) {
    it(`a restarted run follows the prompt it queued instead of queueing it twice (prompt_id ${mode})`, async () => {
      const comfy = await fake({ websocket: true, holdRunning: true, promptIds: mode });
      const store: UpstreamState[] = [];
      const first = comfyContext(await dirs.make(), {}, store);
      const engine = comfyEngine(comfy.baseUrl, textToImage);
      const lost = engine.run(job({ prompt: 'x' }), first);
      // Stopped once the id ComfyUI answered is stored (stopping before that: the client-id test below).
      await until(() => comfy.running !== undefined && store.at(-1)?.id === comfy.running[1]);
      first.controller.abort(new RunStopped('lost'));
      await expect(lost).rejects.toBeInstanceOf(RunStopped);
      expect(comfy.interrupts).toEqual([]);
      const queuedId = comfy.running![1];
      expect(store.at(-1)!.id).toBe(queuedId);

      const second = comfyContext(await dirs.make(), {}, store);
      const resumed = engine.run(job({ prompt: 'x' }), second);
      await new Promise((r) => setTimeout(r, 50));
      comfy.release();
      expect((await resumed).map((o) => o.name)).toEqual(['output.png']);
      expect(comfy.prompts).toHaveLength(1);
      expect([...comfy.history.keys()]).toEqual([queuedId]);
    });
  }

  for (const mode of ['mint', 'duplicates'] as const) {
    it(`a POST /prompt whose answer was lost is looked for before posting again, never queued twice (prompt_id ${mode})`, async () => {
      const comfy = await fake({ websocket: true, promptIds: mode, loseAnswers: 1 });
      const ctx = comfyContext(await dirs.make());
      expect((await comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'x' }), ctx)).map((o) => o.name)).toEqual(['output.png']);
      expect(comfy.prompts).toHaveLength(1);
      expect(comfy.history.size).toBe(1);
      expect(ctx.saved.at(-1)!.id).toBe([...comfy.history.keys()][0]);
    });
  }

  it('finds by its client id a prompt an old ComfyUI renamed when the run stopped before storing the new id', async () => {
    const comfy = await fake({ websocket: true, holdQueue: true, promptIds: 'mint' });
    const store: UpstreamState[] = [];
    const first = comfyContext(await dirs.make(), {}, store);
    // The second save (the id ComfyUI minted) never happens: the worker died in between.
    first.upstream.save = async (s) => {
      if (store.length > 0) throw new RunStopped('lost');
      store.push(structuredClone(s));
    };
    const engine = comfyEngine(comfy.baseUrl, textToImage);
    await expect(engine.run(job({ prompt: 'x' }), first)).rejects.toBeInstanceOf(RunStopped);
    expect(comfy.pending).toHaveLength(1);
    expect(store[0]!.id).not.toBe(comfy.pending[0]![1]);

    const second = comfyContext(await dirs.make(), {}, store);
    const resumed = engine.run(job({ prompt: 'x' }), second);
    await new Promise((r) => setTimeout(r, 50));
    comfy.run();
    await resumed;
    expect(comfy.prompts).toHaveLength(1);
    expect(store.at(-1)).toMatchObject({ id: [...comfy.history.keys()][0], state: { minted: true } });
  });

  it('a cancelled job deletes its queued prompt from the queue; the interrupt by id after it finds nothing of ours running', async () => {
    const comfy = await fake({ websocket: true, holdQueue: true });
    const ctx = comfyContext(await dirs.make());
    const run = comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'x' }), ctx);
    await until(() => comfy.pending.length === 1);
    const id = comfy.pending[0]![1];
    ctx.controller.abort(new RunStopped('cancelled'));
    await expect(run).rejects.toBeInstanceOf(RunStopped);
    await until(() => comfy.deletes.length > 0);
    expect(comfy.deletes).toEqual([id]);
    expect(comfy.pending).toEqual([]);
    // v0.3.57 on honours the id: nothing runs, nothing is interrupted.
    await until(() => comfy.interrupts.length > 0);
    expect(comfy.interrupts).toEqual([id]);
    expect(comfy.running).toBeUndefined();
  });

  it('a job that times out interrupts its running prompt by id', async () => {
    const comfy = await fake({ websocket: true, holdRunning: true });
    const ctx = comfyContext(await dirs.make());
    const run = comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'x' }), ctx);
    await until(() => comfy.running !== undefined);
    const id = comfy.running![1];
    ctx.controller.abort(new RunStopped('timeout'));
    await expect(run).rejects.toBeInstanceOf(RunStopped);
    await until(() => comfy.history.has(id));
    expect(comfy.interrupts).toEqual([id]);
    expect(comfy.history.get(id)).toMatchObject({ status: { status_str: 'error' } });
  });

  it('a job given up on while its prompt runs (ComfyUI kept failing until the deadline) is interrupted there, not left running', async () => {
    const comfy = await fake({ holdRunning: true });
    const ctx = Object.assign(comfyContext(await dirs.make()), { deadlineMs: Date.now() + 1_500 });
    const run = comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'x' }), ctx).catch((e: unknown) => e);
    await until(() => comfy.running !== undefined);
    const id = comfy.running![1];
    // Its history stops answering: the follow retries to the deadline, then gives up on the job.
    comfy.down = (method, path) => method === 'GET' && path.startsWith('/history');
    expect(await run).toMatchObject({ code: 'upstream_unavailable' });
    await until(() => comfy.interrupts.length > 0);
    expect(comfy.deletes).toContain(id);
    expect(comfy.interrupts).toEqual([id]);
  });

  it('with an old ComfyUI (interrupt takes no id) interrupts only when its own prompt is the one running', async () => {
    const comfy = await fake({ websocket: true, holdRunning: true, oldInterrupt: true });
    // Someone else's prompt runs; ours waits behind it.
    await fetch(`${comfy.baseUrl}/prompt`, { method: 'POST', body: JSON.stringify({ prompt: textToImage.prompt, client_id: 'someone-else' }) });
    await until(() => comfy.running !== undefined);
    const ctx = comfyContext(await dirs.make());
    const run = comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'x' }), ctx);
    await until(() => comfy.pending.length === 1);
    ctx.controller.abort(new RunStopped('cancelled'));
    await expect(run).rejects.toBeInstanceOf(RunStopped);
    await until(() => comfy.deletes.length > 0);
    expect(comfy.interrupts).toEqual([]);
    expect(comfy.running![3].client_id).toBe('someone-else');

    comfy.release();
    await until(() => comfy.running === undefined);
    const mine = comfyContext(await dirs.make());
    const running = comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'y' }), mine);
    await until(() => comfy.running !== undefined);
    mine.controller.abort(new RunStopped('cancelled'));
    await expect(running).rejects.toBeInstanceOf(RunStopped);
    await until(() => comfy.interrupts.length > 0);
    expect(comfy.interrupts).toEqual([undefined]);
  });

  it('execution_error fails the job upstream_failed with the node type and the first line of the exception only', async () => {
    for (const websocket of [true, false]) {
      const comfy = await fake({
        websocket,
        executionError: { node_id: '3', node_type: 'KSampler', exception_type: 'torch.OutOfMemoryError', exception_message: 'Allocation on device failed at /opt/ComfyUI/comfy/model.py\nThis error means you ran out of memory on your GPU.\n\nTIPS: try a smaller image' },
      });
      const err = await failure(comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'x' }), comfyContext(await dirs.make())));
      expect(err.code).toBe('upstream_failed');
      expect(err.message).toContain('KSampler (node 3) failed: Allocation on device failed at <path>');
      expect(err.message).not.toMatch(/TIPS|out of memory|\/opt|File "/);
    }
  });

  it('a prompt ComfyUI refuses with node_errors fails upstream_rejected naming the node; without them, with its own message', async () => {
    const comfy = await fake({
      rejectWith: {
        error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', details: '', extra_info: {} },
        node_errors: { '4': { errors: [{ type: 'value_not_in_list', message: 'Value not in list', details: "ckpt_name: 'sd_xl_base_1.0.safetensors' not in []", extra_info: { input_name: 'ckpt_name' } }], dependent_outputs: ['9'], class_type: 'CheckpointLoaderSimple' } },
      },
    });
    const err = await failure(comfyEngine(comfy.baseUrl, textToImage).run(job({ prompt: 'x' }), comfyContext(await dirs.make())));
    expect(err.code).toBe('upstream_rejected');
    expect(err.message).toContain("node 4 (CheckpointLoaderSimple): Value not in list: ckpt_name: 'sd_xl_base_1.0.safetensors' not in []");

    const other = await fake({ rejectWith: { error: { type: 'missing_node_type', message: "Node 'Foo' not found. The custom node may not be installed.", details: 'Node ID #12', extra_info: { node_id: '12', class_type: 'Foo' } }, node_errors: {} } });
    const err2 = await failure(comfyEngine(other.baseUrl, textToImage).run(job({ prompt: 'x' }), comfyContext(await dirs.make())));
    expect(err2.code).toBe('upstream_rejected');
    expect(err2.message).toContain("refused the prompt node 12 (Foo): Node 'Foo' not found");
  });

  it('refuses an output whose bytes are not one of the model output types', async () => {
    const comfy = await fake({ websocket: true });
    const ctx = comfyContext(await dirs.make());
    const err = await failure(comfyEngine(comfy.baseUrl, textToImage, { outputTypes: ['video/mp4'] }).run(job({ prompt: 'x' }), ctx));
    expect(err.code).toBe('upstream_malformed');
    expect(err.message).toContain('output 1 is image/png, not one of video/mp4');
  });

  it('an unreachable ComfyUI is retried until the deadline, then fails upstream_unavailable', async () => {
    const comfy = await fake();
    const url = comfy.baseUrl;
    await comfy.close();
    fakes.length = 0;
    const ctx = Object.assign(comfyContext(await dirs.make()), { deadlineMs: Date.now() + 300 });
    const err = await failure(comfyEngine(url, textToImage).run(job({ prompt: 'x' }), ctx));
    expect(err.code).toBe('upstream_unavailable');
  });
});
