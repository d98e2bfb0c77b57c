import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { errorOf } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { POOL, REMOTE_MODEL, claimNow, remoteApp, remoteJob, workerToken, wpost } from '../helpers/remote-worker.js';
import { waitFor } from '../helpers/scripted-engine.js';

/** Claims under stress: hostile patterns, shutdown, revocation during the wait, empty filters. */
describe.each(backends)('worker claims on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  it('a claim with a pathological pattern is answered by its result (no backtracking blow-up)', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t, ['*'.repeat(150)]);
    const id = await remoteJob(t);
    // Names no remote-bound model: nothing to take.
    expect(await claimNow(t, token, { models: [`${'*'.repeat(11)}x`] })).toEqual([]);
    expect(await claimNow(t, token, { models: [`${'*?'.repeat(10)}*medium`] })).toMatchObject([{ id, model: REMOTE_MODEL }]);
  });

  /** Starts a claim over real HTTP that waits (nothing queued); resolves with its status and body. */
  async function waitingClaim(token: string): Promise<{ answer: Promise<[number, unknown]> }> {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const sleeping = t.clock.sleepers;
    const answer = new Promise<[number, unknown]>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/worker/v1/claim', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve([res.statusCode!, JSON.parse(Buffer.concat(chunks).toString())]));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ wait_ms: 30_000 }));
    });
    await waitFor(async () => t.clock.sleepers > sleeping, 'the claim to wait');
    return { answer };
  }

  it('closing the app answers a waiting claim at once with no jobs', { timeout: 15_000 }, async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const { answer } = await waitingClaim(token);
    // The test clock never runs out the 30 s wait: only the close can end it.
    await t.app.close();
    expect(await answer).toEqual([200, { jobs: [] }]);
  });

  it('a claim that took a job as the server began closing answers it to its connected worker (not handed back, no attempt lost)', { timeout: 15_000 }, async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    // The close (a rolling restart's SIGTERM) begins right after the claim took the job.
    const runs = t.services.runs as { claim: (...a: unknown[]) => Promise<unknown> };
    const claim = runs.claim.bind(runs);
    let closed: Promise<void> | undefined;
    runs.claim = async (...a: unknown[]) => {
      const job = await claim(...a);
      if (job && !closed) {
        closed = t.app.close();
        await new Promise((r) => setTimeout(r, 50));
      }
      return job;
    };
    const answer = await new Promise<[number, { jobs: { id: string; attempt: number }[] }]>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/worker/v1/claim', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve([res.statusCode!, JSON.parse(Buffer.concat(chunks).toString())]));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ wait_ms: 0, max: 2 }));
    });
    await closed;
    expect(closed).toBeDefined();
    expect(answer[0]).toBe(200);
    expect(answer[1].jobs).toMatchObject([{ id, attempt: 1 }]);
    const row = (await t.store.queue.findJob(id))!;
    expect(row.status).not.toBe('queued');
    expect(row.attempts).toBe(1);
  });

  it('a token revoked while its claim waits takes nothing when a job comes', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const { answer } = await waitingClaim(token);
    const tokenId = (await t.services.workerTokens.list())[0]!.id;
    await t.services.workerTokens.revoke(tokenId);
    const id = await remoteJob(t);
    expect(await answer).toEqual([200, { jobs: [] }]);
    expect((await t.store.queue.findJob(id))!.status).toBe('queued');
    expect((await wpost(t, token, '/claim', { wait_ms: 0 })).statusCode).toBe(401);
  });

  it('a claim filter naming no model takes nothing, without asking the store for a NUL type', async () => {
    t = await remoteApp({ backend });
    await remoteJob(t);
    expect(await t.services.runs.claim({ only: [] })).toBeUndefined();
    expect(await t.store.queue.claim({ leaseId: 'l', leaseExpiresAt: 1, outputKey: 'k', now: 0, types: { only: [] } })).toBeUndefined();
  });

  it('a job whose claim failed on the way to its worker goes back to the queue, not left scheduled', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const runs = t.services.runs as { deadline: unknown };
    runs.deadline = () => {
      throw new Error('a fault while making the claim ready');
    };
    const res = await t.app.inject({ method: 'POST', url: '/worker/v1/claim', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: '{"wait_ms":0}' });
    expect(res.statusCode).toBe(500);
    delete runs.deadline;
    expect((await t.store.queue.findJob(id))!.status).toBe('queued');
    expect(await claimNow(t, token)).toMatchObject([{ id, attempt: 2 }]);
  });

  it('refuses (403) a claim of a pool no model is bound to, naming the pools', async () => {
    t = await remoteApp({ backend, modelEngines: { 'video/vendor-d/model-d-fast': 'remote:gpu-z' } });
    const token = await workerToken(t);
    expect(errorOf(await wpost(t, token, '/claim', { wait_ms: 0, pool: 'gpu-typo' }), 403)).toBe(
      'no model is bound to remote:gpu-typo; the pools of this server are gpu-a, gpu-z',
    );
    expect(await claimNow(t, token, { pool: 'gpu-z' })).toEqual([]);
  });

  it('warns, once a minute per token and worker id, about claims that can take no model, and why', async () => {
    const lines: Json[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Json) });
    t = await remoteApp({ backend, logger: log });
    const warnings = () => lines.filter((l) => String(l.msg).startsWith('claims of worker')).map((l) => l.msg);
    const video = await workerToken(t, ['video/*']);
    const any = await workerToken(t);
    expect(await claimNow(t, video, { worker_id: 'w1' })).toEqual([]);
    expect(await claimNow(t, video, { worker_id: 'w1' })).toEqual([]);
    expect(await claimNow(t, any, { worker_id: 'w1', models: ['audio/*'] })).toEqual([]);
    // A claim that can take something is not warned about.
    expect(await claimNow(t, any, { worker_id: 'w2' })).toEqual([]);
    expect(warnings()).toEqual([
      "claims of worker w1 can take no model: its token's models (video/*) match no model bound to a remote pool",
      "claims of worker w1 can take no model: the claim's models (audio/*) match no model bound to a remote pool",
    ]);
    t.clock.advance(30_000);
    expect(await claimNow(t, video, { worker_id: 'w1', pool: POOL })).toEqual([]);
    expect(warnings()).toHaveLength(2);
    t.clock.advance(30_000);
    expect(await claimNow(t, video, { worker_id: 'w1', pool: POOL })).toEqual([]);
    expect(await claimNow(t, video, { worker_id: 'w3' })).toEqual([]);
    expect(warnings().slice(2)).toEqual([
      "claims of worker w1 can take no model: its token's models (video/*) match no model bound to remote:gpu-a",
      "claims of worker w3 can take no model: its token's models (video/*) match no model bound to a remote pool",
    ]);
  });
});
