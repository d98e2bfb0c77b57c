import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';
import { B1, MINIMAL } from '../http/generate-support.js';
import { advancing, call, connect, listen } from './mcp-client.js';

/**
 * generate's wait_seconds: the call follows its job to the end on the injected clock, returning
 * it completed with its result URLs (and resource links), or as it is when the wait runs out.
 */

type Job = { job_id: string; status: string; result?: { urls: string[] } };

describe.each(backends)('generate with wait_seconds on $name', (backend) => {
  let t: TestApp;
  let engine: ScriptedEngine;
  let client: Client;

  beforeAll(async () => {
    engine = new ScriptedEngine();
    t = await createTestApp({ backend, worker: { engine, concurrency: 2 } });
    client = await connect(await listen(t), t.token);
  });
  afterAll(async () => {
    engine.hold?.resolve();
    await client.close();
    await t.close();
  });

  const generateWaiting = (wait: number) => client.callTool({ name: 'generate', arguments: { model: B1, input: MINIMAL[B1], wait_seconds: wait } }) as Promise<CallToolResult>;

  it('returns the job completed, with its result URLs as resource links, when it ends within the wait', async () => {
    engine.hold = deferred();
    const progress: string[] = [];
    const pending = client.callTool({ name: 'generate', arguments: { model: B1, input: MINIMAL[B1], wait_seconds: 30 } }, undefined, {
      onprogress: (p) => progress.push(p.message ?? ''),
    }) as Promise<CallToolResult>;
    await waitFor(async () => engine.sampling.length > 0, 'the job to sample');
    const hold = engine.hold;
    engine.hold = undefined;
    hold.resolve();
    const res = await advancing(t.clock, pending);
    const job = res.structuredContent as Job;
    expect(job.status).toBe('completed');
    expect(job).toEqual((await get(t, `/jobs/${job.job_id}`)).json());
    const [url] = job.result!.urls;
    expect(url).toMatch(/^http:\/\/mediagen\.test\/outputs\/[A-Za-z0-9_-]{32}\/output\.png$/);
    expect(res.content.filter((c) => c.type === 'resource_link')).toEqual([
      { type: 'resource_link', uri: url, name: 'output.png', mimeType: 'image/png', description: `Output of job ${job.job_id}` },
    ]);
    expect(await call(client, 'get_job', { job_id: job.job_id })).toEqual(job);
    // Status changes seen while waiting went out as progress, the last one the end.
    expect(progress.at(-1)).toBe(`job ${job.job_id} is completed`);
    // Charged on completion: the usage report shows it, as GET /usage does.
    const usage = await call<{ items: { job_id: string }[] }>(client, 'get_usage');
    expect(usage.items.map((i) => i.job_id)).toContain(job.job_id);
    expect(usage).toEqual((await get(t, '/usage')).json());
  });

  it('returns the job as it is, without links, when the wait runs out first', async () => {
    engine.hold = deferred();
    const before = t.clock.nowMs();
    const res = await advancing(t.clock, generateWaiting(2));
    const job = res.structuredContent as Job;
    expect(['queued', 'scheduled', 'processing', 'sampling']).toContain(job.status);
    expect(t.clock.nowMs() - before).toBeGreaterThanOrEqual(2000);
    expect(res.content.some((c) => c.type === 'resource_link')).toBe(false);
    const hold = engine.hold;
    engine.hold = undefined;
    hold.resolve();
    const done = await waitFor(async () => {
      const j = await call<Job>(client, 'get_job', { job_id: job.job_id });
      return j.status === 'completed' ? j : undefined;
    }, 'the job to complete');
    expect(done.result!.urls).toHaveLength(1);
  });

  it('tells the waiter how a job ended when it ended before the wait first read it', async () => {
    const created = await call<Job>(client, 'generate', { model: B1, input: MINIMAL[B1] });
    await waitFor(async () => (await call<Job>(client, 'get_job', { job_id: created.job_id })).status === 'completed', 'the job to complete');
    const caller = await t.services.identity.authenticate(`Bearer ${t.token}`);
    const heard: string[] = [];
    const { job } = await t.services.waits.waitForEnd(caller, created.job_id, 5_000, new AbortController().signal, async (j) => {
      heard.push(j.status);
    });
    expect(job.status).toBe('completed');
    expect(heard).toEqual(['completed']);
  });

  it('holds no database connection while waiting: other calls answer while many wait', async () => {
    engine.hold = deferred();
    // More waiting calls than the PostgreSQL pool has connections (5).
    const waiting = Array.from({ length: 6 }, () => generateWaiting(60));
    await waitFor(async () => (await call<{ items: unknown[] }>(client, 'list_jobs', { status: 'backlogged' })).items.length >= 2, 'the backlog to fill');
    expect(await call(client, 'get_usage')).toEqual((await get(t, '/usage')).json());
    const hold = engine.hold;
    engine.hold = undefined;
    hold.resolve();
    const results = await advancing(t.clock, Promise.all(waiting));
    expect(results.map((r) => (r.structuredContent as Job).status)).toEqual(Array(6).fill('completed'));
  });
});

describe('generate with wait_seconds as the server closes', () => {
  it('answers at once with the job as it is, so a tool wait cannot hold a drain up', async () => {
    const engine = new ScriptedEngine();
    engine.hold = deferred();
    const t = await createTestApp({ worker: { engine } });
    const client = await connect(await listen(t), t.token);
    try {
      const pending = client.callTool({ name: 'generate', arguments: { model: B1, input: MINIMAL[B1], wait_seconds: 60 } }) as Promise<CallToolResult>;
      await waitFor(async () => engine.sampling.length > 0, 'the job to sample');
      // The clock never moves: only the close can end the wait.
      const closing = t.app.close();
      const job = (await pending).structuredContent as Job;
      expect(['scheduled', 'processing', 'sampling']).toContain(job.status);
      await closing;
    } finally {
      engine.hold.resolve();
      await client.close();
      await t.close();
    }
  });
});
