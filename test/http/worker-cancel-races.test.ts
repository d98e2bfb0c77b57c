import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { ledgerOf } from '../helpers/node-apps.js';
import { REMOTE_MODEL, claimNow, png, remoteApp, workerToken, wpost, wput } from '../helpers/remote-worker.js';

/**
 * A client's `POST /jobs/{id}/cancel` against a remote worker holding the job, over HTTP on both
 * sides (not a store move): the worker's late calls are told to stop, and a cancel racing the
 * worker's complete has one winner on which the status, the ledger, the files and the webhook agree.
 */
describe.each(backends)('cancel of a remote job, against its worker, on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  const cancel = (id: string) => checkedInject(t.app, { method: 'POST', url: `/jobs/${id}/cancel`, headers: { authorization: `Bearer ${t.token}` } });
  /** A remote job with a webhook (its one delivery row is written as it ends; nothing sends it here). */
  const hookedJob = async () => {
    const res = await generate(t, REMOTE_MODEL, { prompt: 'a lighthouse at dusk', aspect_ratio: '1:1', resolution: '1K' }, { 'x-webhook-url': 'https://hooks.example/h' });
    expect(res.statusCode).toBe(200);
    return (res.json() as { job_id: string }).job_id;
  };
  /** What the job's output key holds (no scratch entries). */
  const filesOf = (key: string) => (existsSync(join(t.dir, 'outputs', key)) ? readdirSync(join(t.dir, 'outputs', key)).filter((n) => !n.startsWith('.')) : []);
  const webhooksOf = async (id: string) => ((await get(t, `/jobs/${id}/webhook-deliveries`)).json() as { items: Json[] }).items;

  it("tells the worker to stop (409 cancelled) on every late call, and removes the job's files, preview and all", async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await hookedJob();
    const [job] = await claimNow(t, token);
    const bytes = await png(16, 16);
    expect((await wput(t, token, id, 'output.png', job!.lease_id, bytes)).statusCode).toBe(201);
    expect((await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, status: 'intermediate-complete', preview: 'output.png' })).statusCode).toBe(200);
    const key = (await t.store.queue.findJob(id))!.outputKey!;
    expect(filesOf(key)).toEqual(['output.png']);
    expect((await cancel(id)).statusCode).toBe(200);
    for (const r of [
      await wput(t, token, id, 'b.png', job!.lease_id, bytes),
      await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id }),
      await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png' }] }),
      await wpost(t, token, `/jobs/${id}/fail`, { lease_id: job!.lease_id, code: 'engine_failed', message: 'x' }),
    ]) {
      expect(r.statusCode).toBe(409);
      expect(r.json()).toMatchObject({ reason: 'cancelled' });
    }
    expect(filesOf(key)).toEqual([]);
    expect((await ledgerOf(t, id)).map((e) => e.kind)).toEqual(['hold', 'release']);
    expect((await webhooksOf(id)).length).toBe(1);
  });

  it('a cancel racing the worker\'s complete has one winner, and the status, ledger, files and webhook agree with it', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const bytes = await png(16, 16);
    // Whoever wins each round, the outcome must be consistent: no round depends on which one it is.
    for (let i = 0; i < 8; i++) {
      const id = await hookedJob();
      const [job] = await claimNow(t, token);
      expect((await wput(t, token, id, 'output.png', job!.lease_id, bytes)).statusCode).toBe(201);
      const key = (await t.store.queue.findJob(id))!.outputKey!;
      const [done, cancelled] = await Promise.all([
        wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png' }] }),
        // Staggered a little, so either call may come first.
        new Promise((r) => setTimeout(r, i % 4)).then(() => cancel(id)),
      ]);
      const shown = (await get(t, `/jobs/${id}`)).json() as Json;
      const ledger = (await ledgerOf(t, id)).map((e) => e.kind);
      if (shown.status === 'completed') {
        expect([done.statusCode, cancelled.statusCode]).toEqual([200, 409]);
        expect(ledger).toEqual(['hold', 'charge']);
        expect(filesOf(key)).toEqual(['output.png']);
      } else {
        expect(shown.status).toBe('cancelled');
        expect([done.statusCode, cancelled.statusCode]).toEqual([409, 200]);
        expect(done.json()).toMatchObject({ reason: 'cancelled' });
        expect(ledger).toEqual(['hold', 'release']);
        expect(filesOf(key)).toEqual([]);
      }
      expect((await webhooksOf(id)).length).toBe(1);
    }
  });
});
