import { afterEach, describe, expect, it } from 'vitest';
import { Worker } from '../../src/worker/worker.js';
import { createTestApp, generate, get, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';

const MODEL = 'image/vendor-b/model-b-1';
let t: TestApp;
let engine: ScriptedEngine;
const workers: Worker[] = [];

afterEach(async () => {
  engine?.hold?.resolve();
  for (const w of workers.splice(0)) await w.stop(0);
  await t?.close();
});

/** A worker of this app's process, started now (the app itself was made without one). */
function startWorker(): Worker {
  const w = new Worker(
    { ...t.services, engine, loadInput: () => Promise.reject(new Error('no inputs here')), loadStyle: () => Promise.reject(new Error('no styles here')), log: silentLog },
    { concurrency: 2, pollMs: 1000 },
  );
  w.start();
  workers.push(w);
  return w;
}

const create = async () => ((await generate(t, MODEL, { prompt: 'a red fox' })).json() as { job_id: string }).job_id;
const job = async (id: string) => (await get(t, `/jobs/${id}`)).json() as Json & { status: string };
const statusIs = (id: string, status: string) => waitFor(async () => (await job(id)).status === status && job(id), `job ${id} to be ${status}`);
const settle = () => new Promise((r) => setTimeout(r, 30));
/**
 * Until the worker's loop waits on the clock again: an advance made while its pass still runs would
 * put its next wake-up past the moment the test means (a fixed pause was too short under load).
 */
const asleep = () => waitFor(async () => t.clock.sleepers > 0, 'the worker to wait on the clock');

describe('recovering jobs of stopped workers', () => {
  it('reclaims a job whose worker died once its lease expires, and completes it exactly once', async () => {
    t = await createTestApp({ runPolicy: { leaseMs: 30_000 } });
    engine = new ScriptedEngine();
    const id = await create();
    // A worker claims the job and dies without a word: no heartbeat, no hand-back.
    const dead = (await t.services.runs.claim())!;
    expect(dead.id).toBe(id);
    startWorker();
    await asleep();
    t.clock.advance(29_000);
    await asleep();
    expect((await job(id)).status).toBe('scheduled');
    t.clock.advance(1_001);
    const done = await statusIs(id, 'completed');
    expect(engine.finished).toEqual([id]);
    const record = (await t.services.runs.find(id))!;
    expect(record.attempts).toBe(2);
    // The dead worker's lease is worthless: it can neither complete nor fail the job again.
    expect(() => t.services.runs.complete(dead, 'scheduled', { urls: [] })).toThrow(/illegal/);
    expect(await t.services.runs.complete(dead, 'intermediate-complete', { urls: ['outputs/x/y.png'] })).toMatchObject({ kind: 'lost', outputsGo: false });
    expect(await t.services.runs.fail(dead, { code: 'timeout', message: 'late' })).toMatchObject({ kind: 'lost', outputsGo: false });
    expect(await job(id)).toEqual(done);
  });

  it('gives up with worker_lost on a job whose workers keep dying', async () => {
    t = await createTestApp({ runPolicy: { leaseMs: 30_000, maxAttempts: 1 } });
    engine = new ScriptedEngine();
    const id = await create();
    await t.services.runs.claim();
    startWorker();
    await asleep();
    t.clock.advance(31_000);
    const failed = await statusIs(id, 'failed');
    expect(failed.error).toMatchObject({ code: 'worker_lost' });
    expect(engine.started).toEqual([]);
  });

  it('fails a reclaimed job with timeout when its deadline passed while nobody ran it', async () => {
    t = await createTestApp({ runPolicy: { leaseMs: 30_000, timeoutMs: () => 60_000 } });
    engine = new ScriptedEngine();
    const id = await create();
    await t.services.runs.claim();
    startWorker();
    await asleep();
    t.clock.advance(61_000);
    expect((await statusIs(id, 'failed')).error).toMatchObject({ code: 'timeout' });
  });

  it('keeps a running job by heartbeats well past its lease', async () => {
    t = await createTestApp({ runPolicy: { leaseMs: 30_000 } });
    engine = new ScriptedEngine();
    engine.hold = deferred();
    startWorker();
    const id = await create();
    await statusIs(id, 'sampling');
    for (let i = 0; i < 12; i++) {
      t.clock.advance(10_000);
      await settle();
    }
    expect((await job(id)).status).toBe('sampling');
    expect((await t.services.runs.find(id))!.attempts).toBe(1);
    engine.hold.resolve();
    await statusIs(id, 'completed');
  });
});

describe('worker shutdown', () => {
  it('lets a running job finish within the grace period', async () => {
    t = await createTestApp();
    engine = new ScriptedEngine();
    engine.hold = deferred();
    const w = startWorker();
    const id = await create();
    await statusIs(id, 'sampling');
    const stopped = w.stop(5_000);
    // Stopped workers claim nothing new.
    const later = await create();
    engine.hold.resolve();
    await stopped;
    expect((await job(id)).status).toBe('completed');
    expect((await job(later)).status).toBe('queued');
  });

  it('hands a job back to the queue when the grace period ends, and another worker finishes it', async () => {
    t = await createTestApp();
    engine = new ScriptedEngine();
    engine.hold = deferred();
    const first = startWorker();
    const id = await create();
    await statusIs(id, 'sampling');
    const stopped = first.stop(5_000);
    await settle();
    t.clock.advance(5_000);
    await stopped;
    const back = await job(id);
    expect(back).toMatchObject({ status: 'queued' });
    expect(back).not.toHaveProperty('result');
    expect(engine.aborted).toEqual([id]);
    expect((await t.services.runs.find(id))!.leaseId).toBeNull();
    engine.hold.resolve();
    engine.hold = undefined;
    startWorker();
    await statusIs(id, 'completed');
  });

  it('a hand-back at shutdown is no lost attempt: the stop counts it, and only real losses add up to worker_lost', async () => {
    t = await createTestApp({ runPolicy: { leaseMs: 30_000, maxAttempts: 2 } });
    engine = new ScriptedEngine();
    engine.hold = deferred();
    const first = startWorker();
    const id = await create();
    await statusIs(id, 'sampling');
    const stopped = first.stop(5_000);
    await settle();
    t.clock.advance(5_000);
    expect(await stopped).toEqual({ inFlight: 1, cut: 1 });
    expect((await t.services.runs.find(id))!).toMatchObject({ status: 'queued', attempts: 0 });
    // One worker lost for real: the second of two attempts is left (counted, the hand-back would have used it up).
    expect((await t.services.runs.claim())!.attempts).toBe(1);
    t.clock.advance(31_000);
    expect(await t.services.runs.reap()).toBe(1);
    expect((await t.services.runs.find(id))!).toMatchObject({ status: 'queued', attempts: 1 });
  });
});
