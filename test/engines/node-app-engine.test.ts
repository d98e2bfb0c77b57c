import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import type { Engine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import { NodeAppEngine } from '../../src/engines/node-app-engine.js';
import { STEPS_AT_ONCE, stepOutputUrl } from '../../src/domain/node-app-plan.js';
import { substitute } from '../../src/domain/node-app-graph.js';
import type { GraphScope, GraphStep } from '../../src/domain/node-app-graph.js';
import { TempDirs, fakeContext } from './engine-harness.js';

/** Writes `<prompt>` (and what it read of its start_image) after reporting every stage, with a preview. */
class EchoEngine implements Engine {
  readonly name = 'echo';
  readonly jobs: EngineJob[] = [];
  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    this.jobs.push(job);
    await ctx.stage('processing');
    const start = typeof job.request.start_image === 'string' ? (await ctx.loadInput(job.request.start_image, 'start_image')).toString() : '';
    await ctx.stage('sampling');
    await writeFile(join(ctx.outDir, 'preview.jpg'), 'preview');
    await ctx.stage('intermediate-complete', { name: 'preview.jpg', contentType: 'image/jpeg' });
    const name = job.model.startsWith('video/') ? 'output.mp4' : 'output.png';
    await writeFile(join(ctx.outDir, name), start ? `${String(job.request.prompt)}<${start}` : String(job.request.prompt));
    return [{ name, contentType: name.endsWith('.mp4') ? 'video/mp4' : 'image/png', durationUs: 5_000_000 }];
  }
}

const plan = (graph: object, inputs: object = {}) => ({ node_app_id: 'app', node_app_version_id: 'v1', inputs, graph });

const FAN_IN = {
  steps: [
    { id: 'a', model: 'image/vendor-b/model-b-1', input: { prompt: '{{inputs.word}}' } },
    { id: 'b', model: 'image/vendor-b/model-b-1', input: { prompt: 'b' } },
    { id: 'c', model: 'video/vendor-e/model-e-1', input: { prompt: 'c', start_image: '{{steps.a.urls[0]}}' } },
  ],
  outputs: { first: '{{steps.a.urls[0]}}', _second: '{{steps.b.urls[0]}}', clip: '{{steps.c.urls[0]}}', again: '{{steps.c.urls[0]}}' },
};

describe('NodeAppEngine', () => {
  const dirs = new TempDirs();
  afterEach(() => dirs.cleanup());
  type Prepare = (step: GraphStep, scope: GraphScope) => Record<string, unknown>;
  const substituted: Prepare = (step, scope) => substitute(step.input, scope, `steps.${step.id}.input`) as Record<string, unknown>;
  const engineOn = (steps: Engine, prepare: Prepare = substituted) => new NodeAppEngine({ steps, prepare });

  it('reports each stage once, in order, whatever its steps report; the preview is the first named output to exist', async () => {
    const ctx = fakeContext(await dirs.make());
    const files = await engineOn(new EchoEngine()).run({ id: 'job-1', model: 'node-app/clip', request: plan(FAN_IN, { word: 'fox' }) }, ctx);
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
    const preview = ctx.stages[2]!.preview!;
    expect(['first', '_second']).toContain(preview.key);
    expect(ctx.stages[2]!.previewExisted).toBe(true);
    expect(files.find((f) => f.key === preview.key)).toEqual(preview);
  });

  it('names each output file after its output, one file per output, keyed, without a measured length', async () => {
    const ctx = fakeContext(await dirs.make());
    const files = await engineOn(new EchoEngine()).run({ id: 'job-1', model: 'node-app/clip', request: plan(FAN_IN, { word: 'fox' }) }, ctx);
    expect(files).toEqual([
      { name: 'first.png', contentType: 'image/png', key: 'first' },
      { name: 'output-2.png', contentType: 'image/png', key: '_second' },
      { name: 'clip.mp4', contentType: 'video/mp4', key: 'clip' },
      { name: 'again.mp4', contentType: 'video/mp4', key: 'again' },
    ]);
    const read = (name: string) => readFile(join(ctx.outDir, name), 'utf8');
    expect(await read('first.png')).toBe('fox');
    expect(await read('clip.mp4')).toBe('c<fox');
    expect(await read('again.mp4')).toBe('c<fox');
    // Only plain names are left for the runner; the steps' directories are hidden.
    expect((await readdir(ctx.outDir)).filter((n) => !n.startsWith('.')).sort()).toEqual(['again.mp4', 'clip.mp4', 'first.png', 'output-2.png']);
  });

  it("gives a later step the earlier step's output as a stand-in URL read from its file, never fetched", async () => {
    const echo = new EchoEngine();
    const ctx = fakeContext(await dirs.make());
    await engineOn(echo).run({ id: 'job-1', model: 'node-app/clip', request: plan(FAN_IN, { word: 'fox' }) }, ctx);
    const c = echo.jobs.find((j) => j.request.prompt === 'c')!;
    expect(c.request.start_image).toBe(stepOutputUrl('job-1', 'a', 0));
    expect(c.model).toBe('video/vendor-e/model-e-1');
    expect(ctx.loaded).toEqual([]);
  });

  it('runs each step as a job of its own id, the job id and the step id', async () => {
    const echo = new EchoEngine();
    await engineOn(echo).run({ id: 'job-1', model: 'node-app/clip', request: plan(FAN_IN, { word: 'fox' }) }, fakeContext(await dirs.make()));
    expect(echo.jobs.map((j) => j.id).sort()).toEqual(['job-1:a', 'job-1:b', 'job-1:c']);
  });

  it('runs at most STEPS_AT_ONCE steps of one graph at once, and every step in the end', async () => {
    let running = 0;
    let most = 0;
    const counting: Engine = {
      name: 'count',
      run: async (job, sub) => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        await writeFile(join(sub.outDir, 'out.png'), job.id);
        return [{ name: 'out.png', contentType: 'image/png' }];
      },
    };
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const graph = {
      steps: ids.map((id) => ({ id, model: 'image/vendor-b/model-b-1', input: { prompt: id } })),
      outputs: Object.fromEntries(ids.map((id) => [id, `{{steps.${id}.urls[0]}}`])),
    };
    const files = await engineOn(counting).run({ id: 'job-1', model: 'node-app/five', request: plan(graph) }, fakeContext(await dirs.make()));
    expect(STEPS_AT_ONCE).toBe(2);
    expect(most).toBe(STEPS_AT_ONCE);
    expect(files.map((f) => f.key)).toEqual(ids);
  });

  it('hands a job that is not a node app to the wrapped engine as it is', async () => {
    const echo = new EchoEngine();
    const ctx = fakeContext(await dirs.make());
    const job = { id: 'job-2', model: 'image/vendor-b/model-b-1', request: { prompt: 'fox' } };
    expect(await engineOn(echo).run(job, ctx)).toEqual([{ name: 'output.png', contentType: 'image/png', durationUs: 5_000_000 }]);
    expect(echo.jobs).toEqual([job]);
  });

  it("fails with input_invalid, prepare's message as it is, when a step's body cannot be prepared at run time", async () => {
    const ctx = fakeContext(await dirs.make());
    const refuse: Prepare = (step, scope) => {
      if (step.model.startsWith('video/')) throw new Error(`step '${step.id}': 'duration' must be one of 5, 10`);
      return substituted(step, scope);
    };
    const run = engineOn(new EchoEngine(), refuse).run({ id: 'job-1', model: 'node-app/clip', request: plan(FAN_IN, { word: 'fox' }) }, ctx);
    await expect(run).rejects.toMatchObject({ code: 'input_invalid', message: "step 'c': 'duration' must be one of 5, 10" });
  });

  it('fails with input_invalid when text with its references written in would be too long', async () => {
    const graph = { steps: [{ id: 'a', model: 'image/vendor-b/model-b-1', input: { prompt: '{{inputs.p}} {{inputs.p}} {{inputs.p}}' } }], outputs: { image: '{{steps.a.urls[0]}}' } };
    const run = engineOn(new EchoEngine()).run({ id: 'job-1', model: 'node-app/big', request: plan(graph, { p: 'x'.repeat(100_000) }) }, fakeContext(await dirs.make()));
    await expect(run).rejects.toMatchObject({ code: 'input_invalid', message: expect.stringMatching(/^steps\.a\.input\.prompt: longer than 262144 characters/) });
  });

  it('fails with the step\'s own error code, its message prefixed with the step', async () => {
    const failing: Engine = { name: 'x', run: async () => Promise.reject(new EngineError('input_too_large', 'start_image has 9000 frames')) };
    const run = engineOn(failing).run({ id: 'job-1', model: 'node-app/clip', request: plan(FAN_IN, { word: 'fox' }) }, fakeContext(await dirs.make()));
    await expect(run).rejects.toMatchObject({ name: 'EngineError', code: 'input_too_large', message: expect.stringMatching(/^step '[ab]': start_image has 9000 frames$/) });
  });

  it("stops every running step with the job's own reason when the job's signal aborts", async () => {
    const ctx = fakeContext(await dirs.make());
    const seen: AbortSignal[] = [];
    const waiting: Engine = {
      name: 'w',
      run: (_job, sub) =>
        new Promise((_, reject) => {
          seen.push(sub.signal);
          sub.signal.addEventListener('abort', () => reject(sub.signal.reason));
        }),
    };
    const run = engineOn(waiting).run({ id: 'job-1', model: 'node-app/clip', request: plan(FAN_IN, { word: 'fox' }) }, ctx);
    await expect.poll(() => seen.length).toBe(2);
    const reason = new Error('cancelled');
    ctx.controller.abort(reason);
    await expect(run).rejects.toBe(reason);
    expect(seen.every((s) => s.aborted)).toBe(true);
  });

  it('fails with engine_failed when the job holds no plan', async () => {
    const run = engineOn(new EchoEngine()).run({ id: 'job-1', model: 'node-app/clip', request: { graph: 'nope' } }, fakeContext(await dirs.make()));
    await expect(run).rejects.toMatchObject({ code: 'engine_failed' });
  });
});
