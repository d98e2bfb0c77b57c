import type { LightMyRequestResponse } from 'fastify';
import { Agent, fetch } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJob, createTestApp, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { IMAGE_THEN_VIDEO, execute, publishGraph } from '../helpers/node-apps.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';
import { colourDataUri } from '../helpers/style-engine.js';
import { advancing } from '../mcp/mcp-client.js';
import { B1, MINIMAL } from './generate-support.js';

/**
 * `Prefer: wait[=N]` on the creation POSTs. The test clock never moves unless a test moves it, so
 * a wait that returns the ended job was woken by the job's change event, not by the poll.
 */
describe.each(backends)('Prefer: wait on $name', (backend) => {
  let t: TestApp;
  let engine: ScriptedEngine;

  beforeEach(async () => {
    engine = new ScriptedEngine();
    t = await createTestApp({ backend, worker: { engine, concurrency: 2 }, waits: { waitsPerWorkspace: 3 } });
  });
  afterEach(async () => {
    engine.hold?.resolve();
    await t.close();
  });

  const waiting = (prefer: string, headers: Record<string, string> = {}) => generate(t, B1, MINIMAL[B1], { prefer, ...headers });
  const release = () => {
    const hold = engine.hold!;
    engine.hold = undefined;
    hold.resolve();
  };
  const asGet = async (res: LightMyRequestResponse) => (await get(t, `/jobs/${(res.json() as Json).job_id as string}`)).json() as Json;
  const holding = () => t.services.waits.holding(t.workspaceId);

  it('answers the job as GET shows it once it ends, with Preference-Applied; status 200 as without', async () => {
    const res = await waiting('wait=30');
    expect(res.statusCode).toBe(200);
    expect(res.headers['preference-applied']).toBe('wait=30');
    const job = res.json() as Json;
    expect(job).toMatchObject({ type: B1, status: 'completed', result: { urls: [expect.stringMatching(/^http:\/\/mediagen\.test\/outputs\//)] } });
    expect(job).toEqual(await asGet(res));
    expect(holding().waits).toBe(0);
  });

  it('answers the job as it is when the wait runs out (the injected clock), non-terminal', async () => {
    engine.hold = deferred();
    const before = t.clock.nowMs();
    const res = await advancing(t.clock, waiting('wait=2'));
    expect(res.headers['preference-applied']).toBe('wait=2');
    const job = res.json() as Json;
    expect(['queued', 'scheduled', 'processing', 'sampling']).toContain(job.status);
    expect(job).not.toHaveProperty('completed_at');
    expect(job).not.toHaveProperty('result');
    expect(t.clock.nowMs() - before).toBeGreaterThanOrEqual(2000);
  });

  it('reads bare wait as 60 s, more than 60 as 60, 0 as at once; ignores what it does not understand', async () => {
    expect((await waiting('wait')).headers['preference-applied']).toBe('wait=60');
    expect((await waiting('wait=600')).headers['preference-applied']).toBe('wait=60');
    expect((await waiting('respond-async, wait="5"; foo=bar')).headers['preference-applied']).toBe('wait=5');
    engine.hold = deferred();
    const now = await waiting('wait=0');
    expect(now.headers['preference-applied']).toBe('wait=0');
    // The job as GET shows it (the worker may move it on meanwhile): no null completed_at or result.
    expect(Object.keys(now.json() as Json).sort()).toEqual(['created_at', 'job_id', 'status', 'type']);
    for (const prefer of ['wait=abc', 'wait=-1', 'wait=1.5', 'wait=', 'return=minimal']) {
      const res = await waiting(prefer);
      expect(res.headers['preference-applied'], prefer).toBeUndefined();
      expect(res.json(), prefer).toMatchObject({ status: expect.stringMatching(/^(queued|backlogged)$/), completed_at: null, result: null });
    }
    // Only the first wait counts (RFC 7240).
    const first = await generate(t, B1, MINIMAL[B1], { prefer: 'wait=0, wait=30' });
    expect(first.headers['preference-applied']).toBe('wait=0');
  });

  it('with an Idempotency-Key: the replay waits for the first job too; without Prefer it is the stored creation answer', async () => {
    engine.hold = deferred();
    const created = await waiting('wait=0', { 'idempotency-key': 'k-1' });
    const id = (created.json() as Json).job_id;
    const pending = waiting('wait=30', { 'idempotency-key': 'k-1' });
    await waitFor(async () => holding().waits === 1, 'the replay to wait');
    release();
    const replay = await pending;
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['preference-applied']).toBe('wait=30');
    expect(replay.json()).toMatchObject({ job_id: id, status: 'completed' });
    const stored = await generate(t, B1, MINIMAL[B1], { 'idempotency-key': 'k-1' });
    expect(stored.headers['preference-applied']).toBeUndefined();
    expect(stored.json()).toMatchObject({ job_id: id, status: 'queued', completed_at: null, result: null });
  });

  it('applies to POST /styles/train and POST /node-apps/{id}/execute (an array of the one waited job)', async () => {
    const trained = await createJob(t, 'loraTraining', { name: 'w', urls: [await colourDataUri(1, 2, 3)] }, { prefer: 'wait=30' });
    expect(trained.headers['preference-applied']).toBe('wait=30');
    expect(['completed', 'failed']).toContain((trained.json() as Json).status);
    expect(trained.json()).toEqual(await asGet(trained));
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const ran = await execute(t, versionId, { prompt: 'a lighthouse on a cliff' }, { prefer: 'wait=30' });
    expect(ran.headers['preference-applied'], ran.body).toBe('wait=30');
    const [job, ...more] = ran.json() as Json[];
    expect(more).toEqual([]);
    expect(['completed', 'failed']).toContain(job!.status);
    expect(job).toEqual((await get(t, `/jobs/${job!.job_id as string}`)).json());
  });

  it('holds no database connection: more waits than the pool has connections, and other requests still answer', async () => {
    await t.close();
    engine = new ScriptedEngine();
    engine.hold = deferred();
    t = await createTestApp({ backend, worker: { engine, concurrency: 2 }, limits: { maxConcurrentJobs: 8, maxBackloggedJobs: 8 } });
    const waits = Array.from({ length: 7 }, () => waiting('wait=60'));
    await waitFor(async () => holding().waits === 7, 'seven waits');
    expect((await get(t, '/jobs?limit=10')).statusCode).toBe(200);
    release();
    const done = await advancing(t.clock, Promise.all(waits));
    expect(done.map((r) => (r.json() as Json).status)).toEqual(Array(7).fill('completed'));
  });

  it('answers at once, without Preference-Applied, past the workspace maximum of waits', async () => {
    engine.hold = deferred();
    const held = Array.from({ length: 3 }, () => waiting('wait=60'));
    await waitFor(async () => holding().waits === 3, 'three waits');
    const fourth = await waiting('wait=60');
    expect(fourth.headers['preference-applied']).toBeUndefined();
    expect(fourth.json()).toMatchObject({ completed_at: null, result: null });
    release();
    await advancing(t.clock, Promise.all(held));
  });

  it('answers at once past the process maximum of waits, all workspaces together', async () => {
    await t.close();
    engine = new ScriptedEngine();
    engine.hold = deferred();
    t = await createTestApp({ backend, worker: { engine, concurrency: 2 }, waits: { waitsPerWorkspace: 3, waitsPerProcess: 2 } });
    const other = await t.newWorkspace('other');
    const held = [waiting('wait=60'), generate(t, B1, MINIMAL[B1], { prefer: 'wait=60' }, other.token)];
    await waitFor(async () => t.services.waits.holding().waits === 2, 'two waits');
    const third = await waiting('wait=60');
    expect(third.headers['preference-applied']).toBeUndefined();
    expect(holding().waits).toBe(1);
    release();
    await advancing(t.clock, Promise.all(held));
    expect(t.services.waits.holding().waits).toBe(0);
  });

  it('ends when the client goes away: the wait is let go at once', async () => {
    engine.hold = deferred();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const abort = new AbortController();
    const agent = new Agent();
    const pending = fetch(new URL(`/generate/${B1}`, base), {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', prefer: 'wait=60' },
      body: JSON.stringify(MINIMAL[B1]),
      signal: abort.signal,
      dispatcher: agent,
    }).catch((err: unknown) => err);
    await waitFor(async () => holding().waits === 1, 'the wait');
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    await agent.destroy();
    await waitFor(async () => holding().waits === 0, 'the wait to be let go');
  });
});
