import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import { PUBLIC_URL, createTestApp, del, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';

const MODEL = 'image/vendor-b/model-b-1';
let t: TestApp;
let engine: ScriptedEngine;

async function start(opts: Parameters<typeof createTestApp>[0] = {}) {
  engine = new ScriptedEngine();
  t = await createTestApp({ ...opts, worker: { engine, concurrency: 4, ...opts.worker } });
}
afterEach(async () => {
  engine?.hold?.resolve();
  await t?.close();
});

const create = async (headers: Record<string, string> = {}, token?: string) => {
  const res = await generate(t, MODEL, { prompt: 'a red fox' }, headers, token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Json & { job_id: string; status: string };
};
const job = async (id: string) => (await get(t, `/jobs/${id}`)).json() as Json & { status: string; result?: { urls: string[] } };
const statusIs = (id: string, status: string) => waitFor(async () => (await job(id)).status === status && job(id), `job ${id} to be ${status}`);

describe('job lifecycle', () => {
  it('runs a job through every status to completed, with an absolute output URL served without auth', async () => {
    await start();
    engine.hold = deferred();
    const { job_id } = await create();
    await statusIs(job_id, 'sampling');
    engine.hold.resolve();
    const done = await statusIs(job_id, 'completed');
    expect(done).toMatchObject({ status: 'completed', result: { urls: [expect.stringMatching(`^${PUBLIC_URL}/outputs/[A-Za-z0-9_-]{32}/output.png$`)] } });
    expect(done.completed_at).toEqual(expect.any(String));
    const path = new URL(done.result!.urls[0]!).pathname;
    const file = await t.app.inject({ method: 'GET', url: path });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.body).toBe(`output of ${job_id}`);
    // The preview is not part of the result and is gone once the output exists.
    const previewGone = await t.app.inject({ method: 'GET', url: path.replace('output.png', 'preview.jpg') });
    expect(previewGone.statusCode).toBe(404);
  });

  it('picks a new job up at once, without waiting for the poll', async () => {
    // The clock never moves here, so the poll (every 10 minutes) never fires: only the signal can.
    await start({ worker: { engine: new ScriptedEngine(), pollMs: 600_000 } });
    const { job_id } = await create();
    await statusIs(job_id, 'completed');
  });

  it('shows the preview in result.urls while the job is intermediate-complete', async () => {
    await start();
    const seen: Json[] = [];
    const original = engine.run.bind(engine);
    engine.run = async (j, ctx) =>
      original(j, {
        ...ctx,
        stage: async (stage, preview) => {
          await ctx.stage(stage, preview);
          seen.push((await job(j.id)) as Json);
        },
      });
    const { job_id } = await create();
    await statusIs(job_id, 'completed');
    expect(seen.map((s) => s.status)).toEqual(['processing', 'sampling', 'intermediate-complete']);
    expect(seen[2]!.result).toEqual({ urls: [expect.stringMatching(/\/preview\.jpg$/)] });
    expect(seen[0]).not.toHaveProperty('result');
  });

  it('cancels a job while it is sampling: the engine is aborted, its files removed, then the job is gone', async () => {
    await start();
    engine.hold = deferred();
    const { job_id } = await create();
    await statusIs(job_id, 'sampling');
    const claimed = await t.services.runs.find(job_id);
    const res = await del(t, `/jobs/${job_id}`);
    expect(res.json()).toEqual({ job_id, deleted: true });
    await waitFor(async () => engine.aborted.includes(job_id), 'the engine to be aborted');
    expect(errorOf(await get(t, `/jobs/${job_id}`), 404)).toMatch(/not found/);
    await waitFor(async () => !existsSync(join(t.outputs.root, claimed!.outputKey!)), 'outputs to be removed');
    expect(engine.finished).not.toContain(job_id);
    // Its slot is free again: the next job runs to the end.
    engine.hold.resolve();
    engine.hold = undefined;
    const next = await create();
    await statusIs(next.job_id, 'completed');
  });

  it('deletes a completed job together with its output files', async () => {
    await start();
    const { job_id } = await create();
    const done = await statusIs(job_id, 'completed');
    const path = new URL(done.result!.urls[0]!).pathname;
    expect((await del(t, `/jobs/${job_id}`)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: path })).statusCode).toBe(404);
    expect(errorOf(await get(t, `/jobs/${job_id}`), 404)).toMatch(/not found/);
  });

  it("fails a job that runs past its model's timeout, and not a moment before", async () => {
    await start({ runPolicy: { timeoutMs: () => 180_000 } });
    engine.hold = deferred();
    const { job_id } = await create();
    await statusIs(job_id, 'sampling');
    t.clock.advance(179_999);
    await new Promise((r) => setTimeout(r, 50));
    expect((await job(job_id)).status).toBe('sampling');
    t.clock.advance(1);
    const failed = await statusIs(job_id, 'failed');
    expect(failed.error).toEqual({ code: 'timeout', message: "the job ran longer than its model's timeout of 180 s" });
    expect(failed).not.toHaveProperty('result');
    expect(failed.completed_at).toEqual(expect.any(String));
    expect(engine.aborted).toContain(job_id);
  });

  it('fails a job with the engine error code and message, or engine_failed for an unexpected error', async () => {
    await start();
    engine.failWith = new EngineError('input_fetch_failed', 'image_url: HTTP 404 from example.com');
    const a = await create();
    expect((await statusIs(a.job_id, 'failed')).error).toEqual({ code: 'input_fetch_failed', message: 'image_url: HTTP 404 from example.com' });
    engine.failWith = new Error('segfault in the GPU driver');
    const b = await create();
    expect((await statusIs(b.job_id, 'failed')).error).toEqual({ code: 'engine_failed', message: 'the engine failed unexpectedly' });
  });

  it('erases the prompt and inputs of a zero-data-retention job when it ends, and keeps others', async () => {
    await start();
    // Zero data retention is a header of the model-a-2 endpoints only (spec 4.2).
    const res = await generate(t, 'image/vendor-a/model-a-2/medium', { prompt: 'a secret', aspect_ratio: '1:1', resolution: '1K' }, { 'x-api-zero-data-retention': '1' });
    const zdr = res.json() as { job_id: string };
    const kept = await create();
    await statusIs(zdr.job_id, 'completed');
    await statusIs(kept.job_id, 'completed');
    expect((await t.services.runs.find(zdr.job_id))!.request).toEqual({});
    expect((await t.services.runs.find(kept.job_id))!.request).toMatchObject({ prompt: 'a red fox' });
  });
});

describe('admission and the backlog', () => {
  it('backlogs jobs past the concurrency limit, answers 429 past the backlog, and promotes in creation order', async () => {
    await start({ limits: { maxConcurrentJobs: 2, maxBackloggedJobs: 3 } });
    engine.hold = deferred();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create()).job_id);
    const statuses = await Promise.all(ids.map(async (id) => (await job(id)).status));
    expect(statuses.slice(2)).toEqual(['backlogged', 'backlogged', 'backlogged']);
    await waitFor(async () => engine.sampling.length === 2, 'two jobs to run');
    expect([...engine.sampling].sort()).toEqual(ids.slice(0, 2).sort());

    const full = await generate(t, MODEL, { prompt: 'one too many' });
    expect(errorOf(full, 429)).toMatch(/too many jobs/);
    expect(full.headers['retry-after']).toBe('5');

    // Each job that ends lets exactly the oldest backlogged job in. Observed at the claim: two
    // runs claimed one after the other may reach the engine in either order.
    const claimed: string[] = [];
    const claimMany = t.services.runs.claimMany.bind(t.services.runs);
    t.services.runs.claimMany = async (...a) => {
      const jobs = await claimMany(...a);
      claimed.push(...jobs.map((j) => j.id));
      return jobs;
    };
    engine.hold.resolve();
    engine.hold = undefined;
    // The engine returns before the worker stores the outputs and ends the job: wait for the end.
    for (const id of ids) await statusIs(id, 'completed');
    expect(claimed).toEqual(ids.slice(2));
  });

  it('counts limits per workspace', async () => {
    await start({ limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 0 } });
    engine.hold = deferred();
    await create();
    expect(errorOf(await generate(t, MODEL, { prompt: 'x' }), 429)).toMatch(/too many jobs/);
    const other = await t.newWorkspace('other');
    const theirs = await create({}, other.token);
    expect(theirs.status).toBe('queued');
  });

  it('cancelling a backlogged job frees its backlog place without running it', async () => {
    await start({ limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 1 } });
    engine.hold = deferred();
    const first = await create();
    const waiting = await create();
    expect(waiting.status).toBe('backlogged');
    expect((await del(t, `/jobs/${waiting.job_id}`)).statusCode).toBe(200);
    const again = await create();
    expect(again.status).toBe('backlogged');
    engine.hold.resolve();
    engine.hold = undefined;
    await statusIs(again.job_id, 'completed');
    expect(engine.started).toEqual([first.job_id, again.job_id]);
  });
});
