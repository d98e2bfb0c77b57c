import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, del, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import type { ClaimedJob } from '../../src/services/jobs/job-runs.js';

const MODEL = 'image/vendor-b/model-b-1';
const TIMEOUT_MS = 60_000;

/**
 * What each of a run's moves answers (services/jobs/run-outcomes.ts): the runner learns from the
 * move itself whether the job ended, went back to the queue or was lost, and whether its files go,
 * without reading the job again.
 */
describe.each(backends)("the typed outcomes of a run's moves: $name", (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  async function running(): Promise<ClaimedJob> {
    const res = await generate(t, MODEL, { prompt: 'a fox' });
    expect(res.statusCode, res.body).toBe(200);
    const job = (await t.services.runs.claim())!;
    expect(await t.services.runs.advance(job, 'scheduled', 'processing')).toMatchObject({ kind: 'moved', job: { status: 'processing' } });
    expect(await t.services.runs.advance(job, 'processing', 'sampling')).toMatchObject({ kind: 'moved', job: { status: 'sampling' } });
    return job;
  }
  const cancel = async (id: string) => expect((await t.app.inject({ method: 'POST', url: `/jobs/${id}/cancel`, headers: { authorization: `Bearer ${t.token}` } })).statusCode).toBe(200);

  it('ended: a completion keeps its outputs, a failure removes them; a second end is lost as `completed`', async () => {
    t = await createTestApp({ backend });
    const runs = t.services.runs;
    const done = await running();
    expect(await runs.complete(done, 'sampling', { urls: [] })).toMatchObject({ kind: 'ended', job: { id: done.id, status: 'completed' }, outputsGo: false });
    expect(await runs.fail(done, { code: 'engine_failed', message: 'x' })).toEqual({ kind: 'lost', why: 'completed', outputsGo: false });
    expect(await runs.heartbeat(done)).toEqual({ kind: 'lost', why: 'completed', outputsGo: false });
    const failed = await running();
    expect(await runs.fail(failed, { code: 'engine_failed', message: 'x' })).toMatchObject({ kind: 'ended', job: { status: 'failed' }, outputsGo: true });
  });

  it('lost: a cancelled or deleted job takes its outputs with it; every move of its run says so', async () => {
    t = await createTestApp({ backend });
    const runs = t.services.runs;
    const job = await running();
    expect(await runs.heartbeat(job, 0.5)).toEqual({ kind: 'held' });
    await cancel(job.id);
    const gone = { kind: 'lost', why: 'cancelled', outputsGo: true };
    expect(await runs.heartbeat(job)).toEqual(gone);
    expect(await runs.saveUpstream(job, { engine: 'provider:p', id: 'u', state: {} })).toEqual(gone);
    expect(await runs.advance(job, 'sampling', 'intermediate-complete')).toEqual(gone);
    expect(await runs.complete(job, 'sampling', { urls: [] })).toEqual(gone);
    expect(await runs.fail(job, { code: 'engine_failed', message: 'x' })).toEqual(gone);
    expect(await runs.handBack(job, { atShutdown: true })).toEqual(gone);

    const deleted = await running();
    expect((await del(t, `/jobs/${deleted.id}`)).statusCode).toBe(200);
    expect(await runs.complete(deleted, 'sampling', { urls: [] })).toEqual({ kind: 'lost', why: 'deleted', outputsGo: true });
    expect(await runs.retryOrFail(deleted, { code: 'engine_failed', message: 'x' })).toEqual({ kind: 'lost', why: 'deleted', outputsGo: true });
  });

  it('requeued, then lost as `lease_lost` to the next claim, whose files the old run must leave alone', async () => {
    t = await createTestApp({ backend });
    const runs = t.services.runs;
    const first = await running();
    expect(await runs.handBack(first)).toEqual({ kind: 'requeued' });
    const second = (await runs.claim())!;
    expect(second.id).toBe(first.id);
    const reclaimed = { kind: 'lost', why: 'lease_lost', outputsGo: false };
    expect(await runs.heartbeat(first)).toEqual(reclaimed);
    expect(await runs.fail(first, { code: 'engine_failed', message: 'x' })).toEqual(reclaimed);
    expect(await runs.handBack(first)).toEqual(reclaimed);
    expect(await runs.retryOrFail(second, { code: 'engine_failed', message: 'x' })).toEqual({ kind: 'requeued' });
  });

  it('a retryable failure on the last attempt ends the job; an infrastructure fault requeues it with its backoff', async () => {
    t = await createTestApp({ backend, runPolicy: { maxAttempts: 1, timeoutMs: () => TIMEOUT_MS } });
    const runs = t.services.runs;
    const last = await running();
    expect(await runs.retryOrFail(last, { code: 'engine_failed', message: 'x' })).toMatchObject({ kind: 'ended', job: { status: 'failed' }, outputsGo: true });
    const faulted = await running();
    expect(await runs.handBackForFault(faulted, { kind: 'disk_full', code: 'ENOSPC' })).toEqual({ kind: 'requeued', retryInMs: expect.any(Number) as unknown });
  });

  it('stale: a stage move from a status the job has left, while the run still holds it, says where the job is', async () => {
    t = await createTestApp({ backend });
    const job = await running();
    expect(await t.services.runs.advance(job, 'processing', 'sampling')).toMatchObject({ kind: 'stale', job: { id: job.id, status: 'sampling' } });
    // A completion leaves from sampling on: one asked of a job still processing meets a status it cannot leave.
    expect((await generate(t, MODEL, { prompt: 'another' })).statusCode).toBe(200);
    const early = (await t.services.runs.claim())!;
    await t.services.runs.advance(early, 'scheduled', 'processing');
    expect(await t.services.runs.complete(early, 'sampling', { urls: [] })).toMatchObject({ kind: 'stale', job: { id: early.id, status: 'processing' } });
  });

  it('lost as `timeout`: the reaper failed the job for its deadline', async () => {
    t = await createTestApp({ backend, runPolicy: { timeoutMs: () => TIMEOUT_MS, leaseMs: 1000 } });
    const job = await running();
    t.clock.advance(TIMEOUT_MS + 1);
    expect(await t.services.runs.reap()).toBe(1);
    expect(await t.services.runs.heartbeat(job)).toEqual({ kind: 'lost', why: 'timeout', outputsGo: false });
  });
});
