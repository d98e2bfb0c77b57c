import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { claimNow, remoteApp, remoteJob, workerToken, wpost } from '../helpers/remote-worker.js';
import { waitFor } from '../helpers/scripted-engine.js';
import type { Log } from '../../src/lib/log.js';
import { RemoteMaintenance } from '../../src/services/remote/remote-maintenance.js';
import { WorkerTokenService } from '../../src/services/remote/remote-tokens.js';
import type { QueueStore } from '../../src/store/store.js';

/**
 * Remote-job maintenance, run by the HTTP app itself (an `api`-only deployment has no in-process
 * worker to reap): expired leases, running jobs past their deadline, queued jobs nobody took.
 * And a long poll whose client went away takes nothing.
 */
describe.each(backends)('remote job maintenance on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  const statusOf = async (id: string) => ((await get(t, `/jobs/${id}`)).json() as { status: string; error?: { code: string; message: string } });
  const once = (id: string, status: string) => waitFor(async () => ((await statusOf(id)).status === status ? statusOf(id) : undefined), `job ${id} ${status}`);
  /**
   * `once`, nudging the clock meanwhile: a maintenance pass still running when the test advanced
   * the clock sleeps from the new time, so that advance alone would never wake it again. For waits
   * past a deadline only, where a little more time changes nothing.
   */
  const onceNudging = async (id: string, status: string) => {
    for (const until = Date.now() + 15_000; ; ) {
      const seen = await statusOf(id);
      if (seen.status === status) return seen;
      if (Date.now() > until) throw new Error(`timed out waiting for job ${id} ${status}`);
      t.clock.advance(100);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  it('fails a queued remote job no worker took within its model timeout, and leaves other models alone', async () => {
    t = await remoteApp({ backend });
    const id = await remoteJob(t);
    const local = ((await generate(t, 'image/vendor-a/model-a-2/large', { prompt: 'local', aspect_ratio: '1:1', resolution: '1K' })).json() as { job_id: string }).job_id;
    t.clock.advance(179_000);
    await new Promise((r) => setTimeout(r, 50));
    expect((await statusOf(id)).status).toBe('queued');
    t.clock.advance(2000);
    const failed = await onceNudging(id, 'failed');
    expect(failed.error).toEqual({ code: 'timeout', message: "no worker took the job within its model's timeout of 180 s; submit it again later" });
    expect((await statusOf(local)).status).toBe('queued');
    await expectLedgerConsistent(t.store, t.workspaceId);
    expect((await t.store.billing.getBalance(t.workspaceId)).heldMicros).toBeGreaterThan(0); // the local job's hold only
  });

  it('requeues a job whose worker stopped heartbeating, and fails one running past its deadline', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [first] = await claimNow(t, token);
    t.clock.advance(31_000);
    await once(id, 'queued');
    const [second] = await claimNow(t, token);
    expect(second).toMatchObject({ id, attempt: 2 });
    // Heartbeats keep the lease, but not past the deadline (the first claim plus 180 s).
    for (let i = 0; i < 7; i++) {
      t.clock.advance(20_000);
      expect((await wpost(t, token, `/jobs/${id}/progress`, { lease_id: second!.lease_id })).statusCode).toBe(200);
    }
    expect((await wpost(t, token, `/jobs/${id}/progress`, { lease_id: first!.lease_id })).json()).toMatchObject({ reason: 'lease_lost' });
    t.clock.advance(10_000);
    const failed = await onceNudging(id, 'failed');
    expect(failed.error!.code).toBe('timeout');
    expect((await wpost(t, token, `/jobs/${id}/progress`, { lease_id: second!.lease_id })).json()).toMatchObject({ reason: 'timeout' });
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('takes nothing for a waiting claim whose client went away', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const sleeping = t.clock.sleepers;
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/worker/v1/claim', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ wait_ms: 20_000 }));
    await waitFor(async () => t.clock.sleepers > sleeping, 'the claim to wait');
    req.destroy();
    await waitFor(async () => t.clock.sleepers === sleeping, 'the claim to stop waiting');
    const id = await remoteJob(t);
    await new Promise((r) => setTimeout(r, 50));
    expect((await statusOf(id)).status).toBe('queued');
    expect(await claimNow(t, token)).toMatchObject([{ id, attempt: 1 }]);
  });

  /** A maintenance pass of its own over the app's services, logging to `log`, reading overdue jobs through `queue`. */
  const maintenance = (log: Log, queue: Pick<QueueStore, 'overdueJobs'> = t.store.queue, aheadMs = 0) => {
    const clock = { nowMs: () => t.clock.nowMs() + aheadMs, sleep: (ms: number, signal?: AbortSignal) => t.clock.sleep(ms, signal) };
    // Its own worker-token service, so its once-a-minute warning slots are not shared with the
    // app's background maintenance, which runs on the same clock.
    const presence = new WorkerTokenService(t.store, t.clock, t.services.bindings.remote);
    return new RemoteMaintenance({ runs: t.services.runs, remote: t.services.bindings.remote, outputs: t.services.outputs, clock, log }, queue, 1000, presence);
  };

  it('warns from maintenance, without any /readyz, about a model no live worker can claim: once a minute', async () => {
    t = await remoteApp({ backend });
    await remoteJob(t);
    const warnings: string[] = [];
    const log: Log = { info: () => undefined, error: () => undefined, warn: (_o, msg) => warnings.push(msg) };
    const m = maintenance(log);
    await m.pass();
    expect(warnings).toEqual(['1 queued job(s) of image/vendor-a/model-a-2/medium wait for a remote worker of pool gpu-a, and no live worker can claim them']);
    t.clock.advance(30_000);
    await m.pass();
    expect(warnings).toHaveLength(1);
    t.clock.advance(30_000);
    await m.pass();
    expect(warnings).toHaveLength(2);
  });

  it('deletes the presence rows of workers unseen for 7 days, once an hour', async () => {
    t = await remoteApp({ backend });
    const { record } = await t.services.workerTokens.create('gpu');
    const nowUs = () => t.clock.nowMs() * 1000;
    const row = (name: string, lastSeenAt: number) => t.store.workerTokens.upsertPresence({ id: `${record.id}:${name}`, tokenId: record.id, name, pool: null, models: [], lastSeenAt });
    const names = async () => (await t.store.workerTokens.livePresence(0, 100)).map((w) => w.name).sort();
    const HOUR_US = 3_600_000_000;
    await row('stale', nowUs() - 7 * 24 * HOUR_US - 1);
    // Exactly 7 days old at the next hour's pass: kept until the one after.
    await row('week', nowUs() - 7 * 24 * HOUR_US + HOUR_US);
    await row('live', nowUs());
    t.clock.advance(3_600_000);
    await waitFor(async () => ((await names()).length === 2 ? true : undefined), 'the stale row to go');
    t.clock.advance(1000);
    await new Promise((r) => setTimeout(r, 50));
    expect(await names()).toEqual(['live', 'week']);
    t.clock.advance(3_600_000);
    await waitFor(async () => ((await names()).length === 1 ? true : undefined), 'the week-old row to go an hour later');
    expect(await names()).toEqual(['live']);
  });

  it('does not expire as untaken a job claimed and requeued after maintenance read it', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    // 100 s on, the job is not overdue to the app's own maintenance; this pass sees the world 100 s
    // later still, where the job, queued since creation, is (its model's timeout is 180 s).
    t.clock.advance(100_000);
    // Between maintenance's read and its expire, a worker claims the job and hands it back.
    const racing: Pick<QueueStore, 'overdueJobs'> = {
      overdueJobs: async (cutoffs, limit) => {
        const jobs = await t.store.queue.overdueJobs(cutoffs, limit);
        const [job] = await claimNow(t, token);
        const back = await wpost(t, token, `/jobs/${job!.id}/fail`, { lease_id: job!.lease_id, code: 'engine_failed', message: 'try again', retryable: true });
        expect(back.json()).toEqual({ status: 'queued' });
        return jobs;
      },
    };
    const quiet: Log = { info: () => undefined, error: () => undefined, warn: () => undefined };
    expect(await maintenance(quiet, racing, 100_000).pass()).toMatchObject({ expired: 0 });
    expect((await statusOf(id)).status).toBe('queued');
    expect(await claimNow(t, token)).toMatchObject([{ id, attempt: 2 }]);
  });
});
