import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { waitFor } from '../helpers/scripted-engine.js';
import type { NewClaims } from '../../src/store/store.js';

describe.each(backends)('the worker claims in batches: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('a worker with N free slots takes N queued jobs with one claim statement', async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 100, maxBackloggedJobs: 0 } });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await generate(t, 'image/vendor-b/model-b-1', { prompt: `p${i}` })).json<{ job_id: string }>().job_id);
    const calls: { asked: number; got: number }[] = [];
    const claimMany = t.store.queue.claimMany.bind(t.store.queue);
    (t.store.queue as { claimMany: typeof claimMany }).claimMany = async (c: NewClaims) => {
      const got = await claimMany(c);
      calls.push({ asked: c.leases.length, got: got.length });
      return got;
    };
    await t.startWorker({ concurrency: 4, pollMs: 60_000 });
    await waitFor(async () => calls.length > 0, 'a claim', 10_000);
    // The jobs were all queued before the worker started: its first claim asked for its four free slots and got them.
    expect(calls[0]).toEqual({ asked: 4, got: 4 });
    for (const job of await Promise.all(ids.map((id) => t.store.queue.findJob(id)))) expect(job?.status).not.toBe('queued');
  });
});
