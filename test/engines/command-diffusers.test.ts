import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommandEngine } from '../../src/engines/command/command-engine.js';
import { CommandCouldNotStart } from '../../src/engines/command/command-pool.js';
import { readCommandSettings } from '../../src/config/command-settings.js';
import { EngineError, RunStopped } from '../../src/engines/engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { captureLog, commandContext, FIXTURES, pngSize } from './command-fixtures.js';
import { TempDirs } from './engine-harness.js';

/**
 * examples/diffusers/serve.py, the very script, run by the command engine from the example's own
 * mediagen.json, with stand-in `torch` and `diffusers` (fixtures/stand-ins/) first on PYTHONPATH:
 * everything but the model's arithmetic, end to end.
 */

const EXAMPLE = resolve(__dirname, '../../examples/diffusers');
const dirs = new TempDirs();
const engines: CommandEngine[] = [];
let log = captureLog();

interface ExampleConfig {
  readonly commands: { readonly sdxl: Record<string, unknown> & { env: Record<string, string> } };
  readonly models: readonly { readonly path: string; readonly request: object; readonly output: { content_types: string[] }; readonly engine: string }[];
}

async function example(env: Record<string, string> = {}, more: Record<string, unknown> = {}): Promise<{ engine: CommandEngine; model: string }> {
  const config = JSON.parse(await readFile(join(EXAMPLE, 'mediagen.json'), 'utf8')) as ExampleConfig;
  const weights = await dirs.make();
  await writeFile(join(weights, 'model_index.json'), JSON.stringify({ _class_name: 'StableDiffusionXLPipeline' }));
  const block = { ...config.commands.sdxl, ...more, env: { ...config.commands.sdxl.env, MODEL_PATH: weights, PYTHONPATH: join(FIXTURES, 'stand-ins'), PYTHONDONTWRITEBYTECODE: '1', ...env } };
  const [settings] = readCommandSettings({ sdxl: block }, join(EXAMPLE, 'mediagen.json'), EXAMPLE);
  const model = config.models[0]!;
  expect(model.engine).toBe(`command:${settings!.name}`);
  const engine = new CommandEngine({
    settings: settings!,
    models: new Map([[model.path, { schema: model.request, outputTypes: model.output.content_types }]]),
    clock: systemClock,
    log,
  });
  engines.push(engine);
  return { engine, model: model.path };
}

afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  await dirs.cleanup();
  log = captureLog();
});

describe('examples/diffusers/serve.py through the command engine', () => {
  it('generates PNGs of the requested size, one per image, reporting each denoising step', async () => {
    const { engine, model } = await example();
    const ctx = commandContext(await dirs.make());
    const outputs = await engine.run({ id: 'j1', model, request: { prompt: 'a lighthouse', width: 64, height: 48, steps: 4, num_images: 2, seed: 7 } }, ctx);
    expect(outputs).toEqual([
      { name: 'output-1.png', contentType: 'image/png' },
      { name: 'output-2.png', contentType: 'image/png' },
    ]);
    for (const o of outputs) expect(pngSize(await readFile(join(ctx.outDir, o.name)))).toEqual({ width: 64, height: 48 });
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
    expect(ctx.fractions).toEqual([0.25, 0.5, 0.75, 1]);
  });

  it('keeps the pipeline loaded between jobs, and the same seed gives the same image', async () => {
    const { engine, model } = await example();
    const runOnce = async (seed: number) => {
      const ctx = commandContext(await dirs.make());
      const [out] = await engine.run({ id: `s${seed}-${Math.random()}`, model, request: { prompt: 'a fox', width: 16, height: 16, steps: 2, seed } }, ctx);
      return readFile(join(ctx.outDir, out!.name));
    };
    const a = await runOnce(1);
    const [pid] = engine.pids;
    expect(await runOnce(1)).toEqual(a);
    expect(await runOnce(2)).not.toEqual(a);
    expect(engine.pids).toEqual([pid]);
  });

  it('interrupts the denoising loop on cancel and keeps the process for the next job', async () => {
    const { engine, model } = await example({ STAND_IN_STEP_SECONDS: '0.02' });
    await engine.run({ id: 'warm', model, request: { prompt: 'x', width: 8, height: 8, steps: 1 } }, commandContext(await dirs.make()));
    const [pid] = engine.pids;
    const ctx = commandContext(await dirs.make(), { onProgress: (f) => f >= 0.1 && ctx.controller.abort(new RunStopped('cancelled')) });
    const err = await engine.run({ id: 'c', model, request: { prompt: 'x', width: 8, height: 8, steps: 500 } }, ctx).catch((e: unknown) => e);
    expect((err as RunStopped).why).toBe('cancelled');
    expect(ctx.fractions.at(-1)!).toBeLessThan(0.5);
    await engine.run({ id: 'after', model, request: { prompt: 'x', width: 8, height: 8, steps: 1 } }, commandContext(await dirs.make()));
    expect(engine.pids).toEqual([pid]);
  });

  it("fails a request the pipeline refuses with input_invalid and the pipeline's first line", async () => {
    const { engine, model } = await example();
    const none = await engine.run({ id: 'none', model, request: { prompt: null, width: 16, height: 16, steps: 1 } }, commandContext(await dirs.make())).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(EngineError);
    expect((none as EngineError).code).toBe('input_invalid');
    expect((none as EngineError).message).toBe('Provide either `prompt` or `prompt_embeds`.');
    // The process is still there for the next job.
    const [ok] = await engine.run({ id: 'ok', model, request: { prompt: 'x', width: 16, height: 16, steps: 1 } }, commandContext(await dirs.make()));
    expect(ok!.contentType).toBe('image/png');
  });

  it('spreads its processes over the GPUs, one each, in half precision', async () => {
    const { engine, model } = await example({ STAND_IN_CUDA_DEVICES: '2' }, { processes: 2 });
    const request = { prompt: 'x', width: 8, height: 8, steps: 1 };
    await Promise.all([1, 2].map(async (n) => engine.run({ id: `g${n}`, model, request }, commandContext(await dirs.make()))));
    // Both processes load their pipeline whichever ran the jobs.
    const devices = () => log.lines.map((l) => String(l.obj.stderr ?? '')).filter((s) => s.startsWith('stand-in pipeline on'));
    for (let i = 0; i < 600 && devices().length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(devices().sort()).toEqual(['stand-in pipeline on cuda:0, torch.float16', 'stand-in pipeline on cuda:1, torch.float16']);
  });

  it('fails the job server_unavailable when the weights are missing: the script cannot start, the cause in the log', async () => {
    const missing = join(await dirs.make(), 'nothing-here');
    await mkdir(missing);
    const { engine, model } = await example({ MODEL_PATH: missing });
    // Its next start, 1 s after the first failed one, comes after this deadline: the job fails then.
    const ctx = commandContext(await dirs.make(), { deadlineMs: Date.now() + 500 });
    const err = await engine.run({ id: 'w', model, request: { prompt: 'x' } }, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandCouldNotStart);
    expect((err as EngineError).code).toBe('server_unavailable');
    const failed = log.lines.find((l) => l.msg === 'command process ended before it was ready');
    expect((failed?.obj.stderrTail as string[]).join('\n')).toContain('model_index.json');
  }, 15_000);
});
