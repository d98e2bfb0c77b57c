import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import type { Engine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { PUBLIC_URL, createTestApp, del, errorOf, get, jobWhenEnded } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { isPng, readMp4Info, readPngSize } from '../helpers/media.js';
import { IMAGE_THEN_VIDEO, IMAGE_THEN_VIDEO_PRICE, executed, ledgerOf, publishGraph } from '../helpers/node-apps.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';
import type { Deferred } from '../helpers/scripted-engine.js';

/**
 * Node-app jobs run by the worker: the graph's steps through the engines, the job's statuses,
 * outputs, failure, cancellation and billing, read back through the API.
 */
type Job = { job_id: string; status: string; result?: { urls: Record<string, string> }; error?: { code: string; message: string } };

const rejectOnAbort = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/** A stand-in engine whose steps are told apart by their prompt: each can be held in sampling, or fail after its hold. */
class StepEngine implements Engine {
  readonly name = 'steps';
  readonly holds = new Map<string, Deferred>();
  readonly failures = new Map<string, Error>();
  readonly started: string[] = [];
  readonly sampling: string[] = [];
  readonly aborted: string[] = [];

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    const step = String(job.request.prompt);
    this.started.push(step);
    try {
      await ctx.stage('processing');
      const start = typeof job.request.start_image === 'string' ? await ctx.loadInput(job.request.start_image, 'start_image') : undefined;
      await ctx.stage('sampling');
      this.sampling.push(step);
      const hold = this.holds.get(step);
      if (hold) await Promise.race([hold.promise, rejectOnAbort(ctx.signal)]);
      const failure = this.failures.get(step);
      if (failure) throw failure;
      const [name, contentType] = job.model.startsWith('video/') ? ['output.mp4', 'video/mp4'] : ['output.png', 'image/png'];
      await writeFile(join(ctx.outDir, name), start ? `${step} from ${start.toString()}` : step);
      return [{ name, contentType }];
    } catch (err) {
      if (ctx.signal.aborted) this.aborted.push(step);
      throw err;
    }
  }
}

/** Two independent steps, then one that needs both. */
const FAN_IN = {
  steps: [
    { id: 'a', model: 'image/vendor-b/model-b-1', input: { prompt: 'a' } },
    { id: 'b', model: 'image/vendor-b/model-b-1', input: { prompt: 'b' } },
    { id: 'c', model: 'video/vendor-e/model-e-1', input: { prompt: 'c', start_image: '{{steps.a.urls[0]}}', end_image: '{{steps.b.urls[0]}}' } },
  ],
  outputs: { a: '{{steps.a.urls[0]}}', b: '{{steps.b.urls[0]}}', clip: '{{steps.c.urls[0]}}' },
};
const ANY_INPUTS = { type: 'object', properties: {}, required: [] };
/** model-b-1 standard twice ($0.0404 each) and 5 s of model-e-1 std. */
const FAN_IN_PRICE = 2 * 40_400 + 5 * 22_100;

const file = async (t: TestApp, url: string) => {
  const res = await t.app.inject({ method: 'GET', url: new URL(url).pathname });
  expect(res.statusCode).toBe(200);
  return res;
};
const status = async (t: TestApp, id: string) => (await get(t, `/jobs/${id}`)).json() as Job;
const statusIs = (t: TestApp, id: string, want: string) => waitFor(async () => ((await status(t, id)).status === want ? status(t, id) : undefined), `job ${id} to be ${want}`);

describe.each(backends)('node-app jobs run by the worker on $name', { timeout: 120_000 }, (backend) => {
  let t: TestApp;
  let release: Array<() => void> = [];
  afterEach(async () => {
    for (const r of release) r();
    release = [];
    await t?.close();
  });

  it("runs the issue's image-then-video graph on the local engine: a PNG and a 5 s MP4 under their output names, billed once", async () => {
    t = await createTestApp({ backend, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }) } });
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const jobId = await executed(t, versionId, { prompt: 'a lighthouse on a cliff', motion: 'slow push-in' });
    const job = await jobWhenEnded<Job>(t, jobId);
    expect(job.error).toBeUndefined();
    expect(job.status).toBe('completed');
    expect(job.result!.urls).toEqual({
      image: expect.stringMatching(`^${PUBLIC_URL}/outputs/[A-Za-z0-9_-]{32}/image\\.png$`),
      video: expect.stringMatching(`^${PUBLIC_URL}/outputs/[A-Za-z0-9_-]{32}/video\\.mp4$`),
    });
    const png = await file(t, job.result!.urls.image!);
    expect(png.headers['content-type']).toBe('image/png');
    expect(isPng(png.rawPayload)).toBe(true);
    expect(readPngSize(png.rawPayload)).toEqual({ width: 1344, height: 756 });
    const mp4 = await file(t, job.result!.urls.video!);
    expect(mp4.headers['content-type']).toBe('video/mp4');
    const info = readMp4Info(mp4.rawPayload);
    expect(info.durationSec).toBeCloseTo(5, 1);
    expect(info.tracks.find((tr) => tr.kind === 'video')).toMatchObject({ width: 1280, height: 720 });
    expect(await ledgerOf(t, jobId)).toEqual([
      { kind: 'hold', amount: IMAGE_THEN_VIDEO_PRICE },
      { kind: 'charge', amount: IMAGE_THEN_VIDEO_PRICE },
    ]);
    await expectLedgerConsistent(t.store, t.workspaceId);
    expect(((await get(t, '/jobs')).json() as { items: unknown[] }).items).toHaveLength(1);
  });

  it("fails the job with a step's input error, named after the step, when an input URL answers 404, and releases the hold", async () => {
    const server = createServer((_req, res) => res.writeHead(404).end());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    release.push(() => server.close());
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await createTestApp({ backend, allowPrivateUrls: true, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), allowPrivateUrls: true } });
    const graph = {
      steps: [{ id: 'img', model: 'image/vendor-a/model-a-2/medium', input: { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', image_url: '{{inputs.photo}}' } }],
      outputs: { image: '{{steps.img.urls[0]}}' },
    };
    const { versionId } = await publishGraph(t, graph, { inputSchema: { type: 'object', properties: { photo: { type: 'string' } }, required: ['photo'] } });
    const jobId = await executed(t, versionId, { photo: `${base}/missing.png` });
    const job = await jobWhenEnded<Job>(t, jobId);
    expect(job.status).toBe('failed');
    expect(job.error!.code).toBe('input_fetch_failed');
    expect(job.error!.message).toMatch(/^step 'img': .*404/);
    expect(await ledgerOf(t, jobId)).toEqual([
      { kind: 'hold', amount: 30_000 },
      { kind: 'release', amount: 30_000 },
    ]);
  });

  it('shows the first output while a later step runs (intermediate-complete), then both; the later step reads the earlier one\'s file', async () => {
    const engine = new StepEngine();
    t = await createTestApp({ backend, worker: { engine } });
    const hold = deferred();
    release.push(hold.resolve);
    engine.holds.set('waves', hold);
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const jobId = await executed(t, versionId, { prompt: 'lighthouse', motion: 'waves' });
    const shown = await statusIs(t, jobId, 'intermediate-complete');
    expect(Object.keys(shown.result!.urls)).toEqual(['image']);
    expect((await file(t, shown.result!.urls.image!)).body).toBe('lighthouse');
    hold.resolve();
    const done = await statusIs(t, jobId, 'completed');
    expect(done.result!.urls.image).toBe(shown.result!.urls.image);
    // The video step was given the image step's output through its stand-in URL.
    expect((await file(t, done.result!.urls.video!)).body).toBe('waves from lighthouse');
    expect(engine.started).toEqual(['lighthouse', 'waves']);
  });

  it('runs independent steps in parallel: both are sampling at once, and the job completes once, charged the sum', async () => {
    const engine = new ScriptedEngine();
    t = await createTestApp({ backend, worker: { engine } });
    engine.hold = deferred();
    release.push(engine.hold.resolve);
    const graph = { steps: FAN_IN.steps.slice(0, 2), outputs: { a: FAN_IN.outputs.a, b: FAN_IN.outputs.b } };
    const { versionId } = await publishGraph(t, graph, { inputSchema: ANY_INPUTS });
    const jobId = await executed(t, versionId, {});
    await waitFor(async () => engine.sampling.length === 2, 'both steps to be sampling at once');
    expect((await status(t, jobId)).status).toBe('sampling');
    engine.hold.resolve();
    const done = await statusIs(t, jobId, 'completed');
    expect(Object.keys(done.result!.urls).sort()).toEqual(['a', 'b']);
    expect(await ledgerOf(t, jobId)).toEqual([
      { kind: 'hold', amount: 80_800 },
      { kind: 'charge', amount: 80_800 },
    ]);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it("fails the job with the failing step's code and message, stops its running sibling, runs nothing after, and releases the hold", async () => {
    const engine = new StepEngine();
    t = await createTestApp({ backend, worker: { engine } });
    const [a, b] = [deferred(), deferred()];
    release.push(a.resolve, b.resolve);
    engine.holds.set('a', a).set('b', b);
    const { versionId } = await publishGraph(t, FAN_IN, { inputSchema: ANY_INPUTS });
    const jobId = await executed(t, versionId, {});
    await waitFor(async () => engine.sampling.length === 2, 'both first steps to be sampling');
    engine.failures.set('a', new EngineError('input_invalid', 'start_image is not a PNG, JPEG or WebP image'));
    a.resolve();
    const job = await jobWhenEnded<Job>(t, jobId);
    expect(job).toMatchObject({ status: 'failed', error: { code: 'input_invalid', message: "step 'a': start_image is not a PNG, JPEG or WebP image" } });
    expect(engine.aborted).toEqual(['b']);
    expect(engine.started.sort()).toEqual(['a', 'b']);
    expect(await ledgerOf(t, jobId)).toEqual([
      { kind: 'hold', amount: FAN_IN_PRICE },
      { kind: 'release', amount: FAN_IN_PRICE },
    ]);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('cancels a graph mid-run: DELETE aborts every running step, starts no further one, and releases the hold', async () => {
    const engine = new ScriptedEngine();
    t = await createTestApp({ backend, worker: { engine } });
    engine.hold = deferred();
    release.push(engine.hold.resolve);
    const { versionId } = await publishGraph(t, FAN_IN, { inputSchema: ANY_INPUTS });
    const jobId = await executed(t, versionId, {});
    await waitFor(async () => engine.sampling.length === 2, 'both first steps to be sampling');
    expect((await del(t, `/jobs/${jobId}`)).json()).toEqual({ job_id: jobId, deleted: true });
    await waitFor(async () => engine.aborted.length === 2, 'both running steps to be aborted');
    expect(errorOf(await get(t, `/jobs/${jobId}`), 404)).toMatch(/not found/);
    expect(engine.started).toHaveLength(2);
    expect(engine.finished).toEqual([]);
    expect(await ledgerOf(t, jobId)).toEqual([
      { kind: 'hold', amount: FAN_IN_PRICE },
      { kind: 'release', amount: FAN_IN_PRICE },
    ]);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });
});
