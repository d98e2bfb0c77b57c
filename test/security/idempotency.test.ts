import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { msToMicros } from '../../src/lib/time.js';
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_WINDOW_MS, requestHash } from '../../src/services/common/idempotency.js';
import { createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';

const B1 = 'image/vendor-b/model-b-1';
const B1_PRICE = 40_400;
const A2 = 'image/vendor-a/model-a-2/medium';
const FOX = { prompt: 'a red fox' };

const withKey = (key: string, more: Record<string, string> = {}) => ({ 'idempotency-key': key, ...more });

/**
 * Holds the app's first store transaction (a request's job transaction, after it took its key)
 * until `letGo`; `inside` resolves once it is held. Later transactions pass straight through.
 */
function holdFirstTransaction(app: TestApp): { inside: Promise<void>; letGo: () => void; restore: () => void } {
  const store = app.store as { transaction: TestApp['store']['transaction'] };
  const original = store.transaction.bind(app.store);
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  let letGo!: () => void;
  const gate = new Promise<void>((r) => (letGo = r));
  let held = true;
  store.transaction = async (fn) => {
    if (held) {
      held = false;
      entered();
      await gate;
    }
    return original(fn);
  };
  return { inside, letGo, restore: () => (store.transaction = original) };
}

describe.each(backends)('Idempotency-Key on POST /generate: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const jobIds = async (token = t.token) => ((await get(t, '/jobs', token)).json() as { items: { job_id: string }[] }).items.map((j) => j.job_id);
  const holds = async (workspaceId = t.workspaceId) => (await t.store.billing.listEntries(workspaceId)).filter((e) => e.kind === 'hold');
  const ok = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Json & { job_id: string };
  };

  it('a retried POST with the same key replays the first response with Idempotent-Replayed: true, and creates and holds nothing more', async () => {
    t = await createTestApp({ backend });
    const first = await generate(t, B1, FOX, withKey('order-42'));
    const job = ok(first);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    t.clock.advance(5_000);
    for (let i = 0; i < 3; i++) {
      const again = await generate(t, B1, FOX, withKey('order-42'));
      expect(again.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
    }
    expect(await jobIds()).toEqual([job.job_id]);
    expect((await holds()).map((h) => h.jobId)).toEqual([job.job_id]);
    expect(await expectLedgerConsistent(t.store, t.workspaceId)).toEqual({ balance: 1_000_000_000, held: B1_PRICE });
    // The key's row holds the job and the response, and no copy of the body.
    const row = await t.store.idempotency.get(t.workspaceId, 'order-42');
    expect(row).toMatchObject({ state: 'done', jobId: job.job_id, responseStatus: 200, endpoint: `/generate/${B1}`, leaseUntil: null });
    expect(JSON.stringify(row)).not.toContain('red fox');
  });

  it('the same fields in another order, and the key quoted as the IETF draft writes it, are the same request', async () => {
    t = await createTestApp({ backend });
    const job = ok(await generate(t, B1, { prompt: 'a red fox', mode: 'max' }, withKey('k-1')));
    const reordered = await generate(t, B1, { mode: 'max', prompt: 'a red fox' }, withKey('"k-1"'));
    expect(reordered.headers['idempotent-replayed']).toBe('true');
    expect(ok(reordered).job_id).toBe(job.job_id);
    expect(await jobIds()).toHaveLength(1);
  });

  it('the same key with a different body or different job headers answers 422 and creates nothing', async () => {
    t = await createTestApp({ backend });
    const body = { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' };
    const job = ok(await generate(t, A2, body, withKey('same')));
    const variants: [Json, Record<string, string>][] = [
      [{ ...body, prompt: 'a blue fox' }, {}],
      [{ ...body, aspect_ratio: '16:9' }, {}],
      [body, { 'x-webhook-url': 'https://hooks.example.com/a' }],
      [body, { 'x-api-zero-data-retention': '1' }],
    ];
    for (const [body, headers] of variants) {
      const res = await generate(t, A2, body, withKey('same', headers));
      expect(errorOf(res, 422)).toMatch(/Idempotency-Key was already used .* with a different request/);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(await jobIds()).toEqual([job.job_id]);
    expect(await holds()).toHaveLength(1);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('the same key on a different endpoint answers 422, even with the same body', async () => {
    t = await createTestApp({ backend });
    ok(await generate(t, B1, { prompt: 'a red fox' }, withKey('cross')));
    const res = await generate(t, 'video/vendor-f/model-f', { prompt: 'a red fox' }, withKey('cross'));
    expect(errorOf(res, 422)).toMatch(/different request \(endpoint, body/);
    expect(await jobIds()).toHaveLength(1);
  });

  it('a key whose first request is still inside its creation answers 409 with Retry-After: 1, then the replay', async () => {
    t = await createTestApp({ backend });
    // Hold the first request after it has taken the key and before its job transaction runs.
    const { inside, letGo, restore } = holdFirstTransaction(t);
    const firstP = generate(t, B1, FOX, withKey('slow'));
    await inside;

    const second = await generate(t, B1, FOX, withKey('slow'));
    expect(errorOf(second, 409)).toMatch(/Idempotency-Key is still being processed/);
    expect(second.headers['retry-after']).toBe('1');
    expect(await holds()).toHaveLength(0);

    letGo();
    const first = ok(await firstP);
    restore();
    const third = await generate(t, B1, FOX, withKey('slow'));
    expect(third.headers['idempotent-replayed']).toBe('true');
    expect(ok(third).job_id).toBe(first.job_id);
    expect(await jobIds()).toEqual([first.job_id]);
  });

  it('a request that outlives its lease loses its key: the request that took the key over creates the one job, it gets 409', async () => {
    t = await createTestApp({ backend });
    const { inside, letGo } = holdFirstTransaction(t);
    const slowP = generate(t, B1, FOX, withKey('lease'));
    await inside;
    t.clock.advance(IDEMPOTENCY_LEASE_MS + 1);
    const taker = ok(await generate(t, B1, FOX, withKey('lease')));
    letGo();
    const slow = await slowP;
    expect(errorOf(slow, 409)).toMatch(/still being processed/);
    expect(await jobIds()).toEqual([taker.job_id]);
    expect(await expectLedgerConsistent(t.store, t.workspaceId)).toEqual({ balance: 1_000_000_000, held: B1_PRICE });
    expect(ok(await generate(t, B1, FOX, withKey('lease'))).job_id).toBe(taker.job_id);
  });

  it('the marker of a request that died answers 409 only until its lease ends; then the key is free', async () => {
    t = await createTestApp({ backend });
    // The request as it is stored after validation (defaults filled in) is what a key is bound to.
    const plain = ok(await generate(t, B1, FOX));
    const validated = (await t.store.queue.findJob(plain.job_id))!.request;
    const now = t.clock.nowMs();
    const attemptId = newId();
    // What a process that crashed after taking the key leaves behind.
    const { claimed } = await t.store.idempotency.claim(
      {
        workspaceId: t.workspaceId,
        key: 'crashed',
        attemptId,
        requestHash: requestHash(attemptId, { key: 'crashed', endpoint: `/generate/${B1}`, body: validated, webhookUrl: null, zeroDataRetention: false }),
        endpoint: `/generate/${B1}`,
        leaseUntil: msToMicros(now + IDEMPOTENCY_LEASE_MS),
        now: msToMicros(now),
      },
      msToMicros(now - IDEMPOTENCY_WINDOW_MS),
      0,
    );
    expect(claimed).toBe(true);
    errorOf(await generate(t, B1, FOX, withKey('crashed')), 409);
    errorOf(await generate(t, B1, { prompt: 'another fox' }, withKey('crashed')), 422);
    t.clock.advance(IDEMPOTENCY_LEASE_MS - 1);
    errorOf(await generate(t, B1, FOX, withKey('crashed')), 409);
    t.clock.advance(2);
    const res = await generate(t, B1, FOX, withKey('crashed'));
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    const job = ok(res);
    expect((await jobIds()).sort()).toEqual([plain.job_id, job.job_id].sort());
    expect(await t.store.idempotency.get(t.workspaceId, 'crashed')).toMatchObject({ state: 'done', jobId: job.job_id });
  });

  it('two workspaces may use the same key: each gets its own job', async () => {
    t = await createTestApp({ backend });
    const other = await t.newWorkspace('other');
    const mine = ok(await generate(t, B1, FOX, withKey('shared-key')));
    const theirs = await generate(t, B1, FOX, withKey('shared-key'), other.token);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(ok(theirs).job_id).not.toBe(mine.job_id);
    expect(await jobIds()).toEqual([mine.job_id]);
    expect(await jobIds(other.token)).toEqual([ok(theirs).job_id]);
    expect(await holds(other.workspaceId)).toHaveLength(1);
  });

  it('24 hours after its first request a key is forgotten: the same request creates a new job, and old keys are pruned', async () => {
    t = await createTestApp({ backend });
    const first = ok(await generate(t, B1, FOX, withKey('daily')));
    ok(await generate(t, B1, FOX, withKey('old-other')));
    t.clock.advance(IDEMPOTENCY_WINDOW_MS - 1_000);
    expect((await generate(t, B1, FOX, withKey('daily'))).headers['idempotent-replayed']).toBe('true');
    t.clock.advance(1_000);
    const next = await generate(t, B1, FOX, withKey('daily'));
    expect(next.headers['idempotent-replayed']).toBeUndefined();
    expect(ok(next).job_id).not.toBe(first.job_id);
    expect(await jobIds()).toHaveLength(3);
    // Taking a key also deletes expired ones, a bounded batch at a time.
    expect(await t.store.idempotency.get(t.workspaceId, 'old-other')).toBeUndefined();
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('a first attempt refused with 402 frees the key: after a top-up the retry creates the job', async () => {
    t = await createTestApp({ backend, balanceMicros: 0 });
    const refused = await generate(t, B1, FOX, withKey('pay-later'));
    errorOf(refused, 402);
    expect(await t.store.idempotency.get(t.workspaceId, 'pay-later')).toBeUndefined();
    expect(await holds()).toHaveLength(0);

    await t.store.billing.topUp({ workspaceId: t.workspaceId, amountMicros: 1_000_000, createdBy: 'test', now: msToMicros(t.clock.nowMs()) });
    const retried = await generate(t, B1, FOX, withKey('pay-later'));
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    const job = ok(retried);
    expect(await jobIds()).toEqual([job.job_id]);
    expect(ok(await generate(t, B1, FOX, withKey('pay-later'))).job_id).toBe(job.job_id);
    expect(await expectLedgerConsistent(t.store, t.workspaceId)).toEqual({ balance: 1_000_000, held: B1_PRICE });
  });

  it('a request refused as invalid does not take its key', async () => {
    t = await createTestApp({ backend });
    errorOf(await generate(t, B1, { prompt: 'a red fox', mode: 'fastest' }, withKey('fix-me')), 400);
    expect(await t.store.idempotency.get(t.workspaceId, 'fix-me')).toBeUndefined();
    ok(await generate(t, B1, FOX, withKey('fix-me')));
  });

  it('twenty concurrent requests with one key over real HTTP create exactly one job; every 200 names it, the rest are 409', async () => {
    t = await createTestApp({ backend });
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const post = () =>
      fetch(`${base}/generate/${B1}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', 'idempotency-key': 'stampede' },
        body: JSON.stringify(FOX),
      }).then(async (r) => ({ status: r.status, replayed: r.headers.get('idempotent-replayed'), retryAfter: r.headers.get('retry-after'), body: (await r.json()) as Json }));
    const responses = await Promise.all(Array.from({ length: 20 }, post));

    const created = responses.filter((r) => r.status === 200 && r.replayed === null);
    expect(created).toHaveLength(1);
    const jobId = created[0]!.body.job_id;
    for (const r of responses) {
      expect([200, 409]).toContain(r.status);
      if (r.status === 200) expect(r.body.job_id).toBe(jobId);
      else expect(r.retryAfter).toBe('1');
    }
    expect(await jobIds()).toEqual([jobId]);
    expect(await expectLedgerConsistent(t.store, t.workspaceId)).toEqual({ balance: 1_000_000_000, held: B1_PRICE });
  });
});

describe('the Idempotency-Key header itself', () => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'clé'],
    ['an empty quoted string', '""'],
  ])('%s is 400 naming the header, and creates nothing', async (_name, key) => {
    t = await createTestApp();
    expect(errorOf(await generate(t, B1, FOX, withKey(key)), 400)).toBe('Idempotency-Key must be 1 to 255 printable ASCII characters');
    expect(await t.store.billing.listEntries(t.workspaceId)).toHaveLength(1); // the bootstrap top-up
  });

  it('255 printable characters, spaces and symbols included, are a key', async () => {
    t = await createTestApp();
    const key = `a b!~${'x'.repeat(250)}`;
    const job = (await generate(t, B1, FOX, withKey(key))).json() as Json;
    const again = await generate(t, B1, FOX, withKey(key));
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((again.json() as Json).job_id).toBe(job.job_id);
  });

  it('sent twice is 400, even with the same value', async () => {
    t = await createTestApp();
    const res = await t.app.inject({
      method: 'POST',
      url: `/generate/${B1}`,
      headers: {
        authorization: `Bearer ${t.token}`,
        'content-type': 'application/json',
        'idempotency-key': ['same', 'same'] as unknown as string,
      },
      payload: JSON.stringify(FOX),
    });
    expect(errorOf(res, 400)).toMatch(/Idempotency-Key header at most once/);
  });
});
