import { afterEach, describe, expect, it } from 'vitest';
import type { Log } from '../../src/lib/log.js';
import { LIVE_WINDOW_MS, PRESENCE_KEEP_MS, PRESENCE_PRUNE_BATCH, PRESENCE_PRUNE_MS, PRESENCE_WRITE_MS, UNSERVED_WARN_MS } from '../../src/services/remote/remote-tokens.js';
import type { WorkerPrincipal } from '../../src/services/remote/remote-tokens.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { createTestApp, generate } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';

const B1 = 'image/vendor-b/model-b-1';
const A2 = 'image/vendor-a/model-a-2/medium';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const readyz = async (app: TestApp): Promise<Json> => {
  const res = await checkedInject(app.app, { method: 'GET', url: '/readyz' });
  expect(res.statusCode).toBe(200);
  return res.json<Json>();
};

async function principal(app: TestApp, models: string[] = []): Promise<WorkerPrincipal> {
  const { token } = await app.services.workerTokens.create('gpu', models);
  return app.services.workerTokens.authenticate([`Bearer ${token}`]);
}

const capture = (): Log & { warnings: string[] } => {
  const warnings: string[] = [];
  return { warnings, info: () => undefined, error: () => undefined, warn: (_o, msg) => warnings.push(msg) };
};

describe.each(backends)('remote worker presence and /readyz on $name', (backend) => {
  it('/readyz says nothing about remote workers when no model is bound to a pool', async () => {
    t = await createTestApp({ backend });
    // `media` names the FFmpeg in use (test/http/health.test.ts).
    expect(await readyz(t)).toEqual({ status: 'ready', checks: { store: 'ok', migrations: 'ok', disk: 'ok' }, media: expect.any(Object) });
  });

  it('lists a remote-bound model with queued jobs while no live worker can claim it, and stays ready', async () => {
    t = await createTestApp({ backend, modelEngines: { [B1]: 'remote:gpu-a', [A2]: 'remote:gpu-b' } });
    expect((await readyz(t)).remote).toEqual({ live_workers: 0, waiting: [] });
    for (let i = 0; i < 2; i++) expect((await generate(t, B1, { prompt: 'a red fox' })).statusCode).toBe(200);
    const body = await readyz(t);
    expect(body).toEqual({
      status: 'ready',
      checks: { store: 'ok', migrations: 'ok', disk: 'ok' },
      remote: { live_workers: 0, waiting: [{ model: B1, pool: 'gpu-a', queued: 2 }] },
      media: expect.any(Object),
    });

    // Workers that cannot claim B1: another pool, a token naming other models, a claim naming others.
    const other = await principal(t);
    await t.services.workerTokens.seen(other, { workerId: 'w1', pool: 'gpu-b' });
    await t.services.workerTokens.seen(await principal(t, ['video/*']), { workerId: 'w2' });
    await t.services.workerTokens.seen(other, { workerId: 'w3', models: ['image/vendor-a/*'] });
    expect((await readyz(t)).remote).toEqual({ live_workers: 3, waiting: [{ model: B1, pool: 'gpu-a', queued: 2 }] });

    // One that can: any pool, its token's patterns and its claim's cover B1.
    await t.services.workerTokens.seen(await principal(t, ['image/*']), { workerId: 'w4', models: ['image/vendor-b/*'] });
    expect((await readyz(t)).remote).toEqual({ live_workers: 4, waiting: [] });
  });

  it('a worker stops counting once unseen for 60 s, or when its token is revoked', async () => {
    t = await createTestApp({ backend, modelEngines: { [B1]: 'remote:gpu-a' } });
    expect((await generate(t, B1, { prompt: 'a red fox' })).statusCode).toBe(200);
    const p = await principal(t);
    await t.services.workerTokens.seen(p, { workerId: 'w1', pool: 'gpu-a' });
    expect((await readyz(t)).remote).toEqual({ live_workers: 1, waiting: [] });
    t.clock.advance(LIVE_WINDOW_MS);
    expect((await readyz(t)).remote).toEqual({ live_workers: 1, waiting: [] });
    t.clock.advance(1);
    expect((await readyz(t)).remote).toEqual({ live_workers: 0, waiting: [{ model: B1, pool: 'gpu-a', queued: 1 }] });

    await t.services.workerTokens.seen(p, { workerId: 'w1', pool: 'gpu-a' });
    expect((await readyz(t)).remote).toMatchObject({ waiting: [] });
    await t.services.workerTokens.revoke(p.tokenId);
    expect((await readyz(t)).remote).toEqual({ live_workers: 0, waiting: [{ model: B1, pool: 'gpu-a', queued: 1 }] });
  });

  it('rewrites a worker\u2019s presence at most every 5 s, unless what it claims changed', async () => {
    t = await createTestApp({ backend });
    const p = await principal(t);
    const seenAt = async () => (await t!.store.workerTokens.livePresence(0, 10)).map((w) => [w.name, w.pool, w.lastSeenAt]);
    const t0 = t.clock.nowMs() * 1000;
    await t.services.workerTokens.seen(p, { workerId: 'w1' });
    t.clock.advance(PRESENCE_WRITE_MS - 1);
    await t.services.workerTokens.seen(p, { workerId: 'w1' });
    expect(await seenAt()).toEqual([['w1', null, t0]]);
    t.clock.advance(1);
    await t.services.workerTokens.seen(p, { workerId: 'w1' });
    const t1 = t.clock.nowMs() * 1000;
    expect(await seenAt()).toEqual([['w1', null, t1]]);
    t.clock.advance(10);
    await t.services.workerTokens.seen(p, { workerId: 'w1', pool: 'gpu-a' });
    expect(await seenAt()).toEqual([['w1', 'gpu-a', t1 + 10_000]]);
    // No worker_id: one worker per token, named default.
    await t.services.workerTokens.seen(p, {});
    expect((await seenAt()).map(([name]) => name).sort()).toEqual(['default', 'w1']);
  });

  it('prunes workers unseen for 7 days, a batch at most once an hour', async () => {
    t = await createTestApp({ backend });
    const p = await principal(t);
    const names = async () => (await t!.store.workerTokens.livePresence(0, 1000)).map((w) => w.name).sort();
    for (let i = 0; i < PRESENCE_PRUNE_BATCH + 2; i++) await t.services.workerTokens.seen(p, { workerId: `old-${String(i).padStart(3, '0')}` });
    t.clock.advance(10);
    await t.services.workerTokens.seen(p, { workerId: 'recent' });
    t.clock.advance(PRESENCE_KEEP_MS);
    // The old ones were last seen 7 days and 10 ms ago, 'recent' exactly 7 days ago: it stays.
    expect(await t.services.workerTokens.prunePresence()).toBe(PRESENCE_PRUNE_BATCH);
    expect(await names()).toHaveLength(3);
    t.clock.advance(PRESENCE_PRUNE_MS - 1);
    expect(await t.services.workerTokens.prunePresence()).toBe(0);
    expect(await names()).toHaveLength(3);
    t.clock.advance(1);
    expect(await t.services.workerTokens.prunePresence()).toBe(3);
    expect(await names()).toEqual([]);
  });

  it('warns about each waiting model at most once a minute', async () => {
    t = await createTestApp({ backend, modelEngines: { [B1]: 'remote:gpu-a', [A2]: 'remote:gpu-b' } });
    expect((await generate(t, B1, { prompt: 'a red fox' })).statusCode).toBe(200);
    const log = capture();
    await t.services.workerTokens.unserved(log);
    await t.services.workerTokens.unserved(log);
    expect(log.warnings).toEqual([`1 queued job(s) of ${B1} wait for a remote worker of pool gpu-a, and no live worker can claim them`]);
    expect((await generate(t, A2, { prompt: 'a cat', aspect_ratio: '1:1', resolution: '1K' })).statusCode).toBe(200);
    t.clock.advance(UNSERVED_WARN_MS - 1);
    await t.services.workerTokens.unserved(log);
    expect(log.warnings).toHaveLength(2);
    expect(log.warnings[1]).toContain(A2);
    t.clock.advance(1);
    await t.services.workerTokens.unserved(log);
    expect(log.warnings).toHaveLength(3);
    expect(log.warnings[2]).toContain(B1);
  });
});
