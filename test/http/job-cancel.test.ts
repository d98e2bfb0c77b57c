import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { ledgerOf } from '../helpers/node-apps.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';
import { B1, MINIMAL } from './generate-support.js';

/** POST /jobs/{id}/cancel: DELETE's cancel without the delete; the record stays, `cancelled`. */
describe.each(backends)('POST /jobs/{id}/cancel on $name', (backend) => {
  let t: TestApp;
  let engine: ScriptedEngine;

  beforeEach(async () => {
    engine = new ScriptedEngine();
    engine.hold = deferred();
    t = await createTestApp({ backend, worker: { engine, concurrency: 1 }, limits: { maxConcurrentJobs: 1, maxBackloggedJobs: 5 } });
  });
  afterEach(async () => {
    engine.hold?.resolve();
    await t.close();
  });

  const create = async (headers: Record<string, string> = {}) => ((await generate(t, B1, MINIMAL[B1], headers)).json() as Json).job_id as string;
  const cancel = (id: string, token = t.token): Promise<LightMyRequestResponse> =>
    checkedInject(t.app, { method: 'POST', url: `/jobs/${id}/cancel`, headers: { authorization: `Bearer ${token}` } });
  const job = async (id: string) => (await get(t, `/jobs/${id}`)).json() as Json;

  it('cancels a running job and keeps it: 200 with the job as GET shows it, the run stopped and its files removed, the hold released', async () => {
    const id = await create({ 'x-webhook-url': 'https://receiver.example/hooks/mediagen' });
    await waitFor(async () => engine.sampling.includes(id), 'the job to sample');
    const key = (await t.store.queue.findJob(id))!.outputKey!;
    const res = await cancel(id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ job_id: id, type: B1, status: 'cancelled', created_at: expect.any(String), completed_at: expect.any(String) });
    expect(await job(id)).toEqual(res.json());
    const list = (await get(t, '/jobs?status=cancelled')).json() as { items: Json[] };
    expect(list.items).toEqual([res.json()]);
    await waitFor(async () => engine.aborted.includes(id), 'the run to be aborted');
    await waitFor(async () => !existsSync(join(t.dir, 'outputs', key)), 'its files to be removed');
    expect(await ledgerOf(t, id)).toEqual([
      { kind: 'hold', amount: expect.any(Number) },
      { kind: 'release', amount: expect.any(Number) },
    ]);
    const deliveries = (await get(t, `/jobs/${id}/webhook-deliveries`)).json() as { items: Json[] };
    expect(deliveries.items).toMatchObject([{ event: 'cancelled', state: 'pending' }]);
    const history = await t.store.jobs.transitions((await t.store.queue.findJob(id))!.apiUserId, id, 0, 100);
    expect(history!.transitions.map((h) => h.status)).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'cancelled']);
  });

  it('cancels a backlogged job, and the freed slot goes to the next one', async () => {
    const running = await create();
    const backlogged = await create();
    const next = await create();
    expect((await job(backlogged)).status).toBe('backlogged');
    expect((await cancel(backlogged)).json()).toMatchObject({ status: 'cancelled' });
    expect((await cancel(running)).json()).toMatchObject({ status: 'cancelled' });
    expect(['queued', 'scheduled', 'processing', 'sampling']).toContain((await job(next)).status);
  });

  it('answers 409 with the status for a job that already ended, and changes nothing', async () => {
    engine.hold = undefined;
    const id = await create();
    await waitFor(async () => (await job(id)).status === 'completed', 'the job to complete');
    const before = await job(id);
    const res = await cancel(id);
    expect(errorOf(res, 409)).toBe(`job '${id}' has already ended: it is completed`);
    expect(res.json()).toEqual({ error: expect.any(String), status: 'completed' });
    expect(await job(id)).toEqual(before);
    const other = await create();
    await cancel(other);
    expect((await cancel(other)).json()).toEqual({ error: `job '${other}' has already ended: it is cancelled`, status: 'cancelled' });
  });

  it('answers 404 as DELETE does: unknown, malformed, another workspace, deleted', async () => {
    const id = await create();
    const other = await t.newWorkspace('other');
    expect(errorOf(await cancel(id, other.token), 404)).toBe(`job '${id}' not found`);
    expect(errorOf(await cancel('0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'), 404)).toBe("job '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69' not found");
    expect(errorOf(await cancel('nope'), 404)).toBe("job 'nope' not found");
    expect((await checkedInject(t.app, { method: 'DELETE', url: `/jobs/${id}`, headers: { authorization: `Bearer ${t.token}` } })).statusCode).toBe(200);
    expect(errorOf(await cancel(id), 404)).toBe(`job '${id}' not found`);
    expect((await job(id)).error).toBeDefined();
  });
});
