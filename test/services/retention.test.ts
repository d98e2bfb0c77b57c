import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { msToMicros } from '../../src/lib/time.js';
import type { OutputStore } from '../../src/outputs/output-store.js';
import type { Store } from '../../src/store/store.js';
import { RetentionJanitor } from '../../src/services/upkeep/retention.js';
import type { RetentionPolicy, RetentionReport } from '../../src/services/upkeep/retention.js';
import type { ClaimedJob } from '../../src/services/jobs/job-runs.js';
import { PUBLIC_URL, createTestApp, del, errorOf, generate, get, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { uploadAsset } from '../helpers/asset-files.js';
import { backends } from '../helpers/backends.js';
import { waitFor } from '../helpers/scripted-engine.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MODEL = 'image/vendor-b/model-b-1';
const HOOK = { 'x-webhook-url': 'https://receiver.example/hook' };
/** The config's defaults (docs/config.md). */
const DEFAULTS: RetentionPolicy = { outputDays: 30, jobDays: 90, assetDays: 0, webhookLogDays: 30, idempotencyKeyHours: 24 };

let png: Buffer;
beforeAll(async () => {
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 10, g: 120, b: 30 } } }).png().toBuffer();
});

interface Made {
  readonly id: string;
  readonly key: string;
  /** The output URL's path. */
  readonly path: string;
}

/** A job claimed and run as a worker would, up to sampling, with a file stored under its key. */
async function running(t: TestApp, headers: Record<string, string> = {}): Promise<Made & { claimed: ClaimedJob }> {
  const res = await generate(t, MODEL, { prompt: 'a fox' }, headers);
  expect(res.statusCode).toBe(200);
  const id = res.json<{ job_id: string }>().job_id;
  const claimed = (await t.services.runs.claim())!;
  expect(claimed.id).toBe(id);
  await t.services.runs.advance(claimed, 'scheduled', 'processing');
  await t.services.runs.advance(claimed, 'processing', 'sampling');
  writeFileSync(join(await t.outputs.reset(claimed.outputKey), 'image.png'), png);
  return { id, key: claimed.outputKey, path: t.outputs.url(claimed.outputKey, 'image.png'), claimed };
}

/** A job that ended (completed with its file as the result, or failed) at the clock's time. */
async function finished(t: TestApp, outcome: 'completed' | 'failed' = 'completed', headers: Record<string, string> = {}): Promise<Made> {
  const job = await running(t, headers);
  const ended =
    outcome === 'completed'
      ? await t.services.runs.complete(job.claimed, 'sampling', { urls: [job.path] })
      : await t.services.runs.fail(job.claimed, { code: 'engine_failed', message: 'scripted' });
  expect(ended).toMatchObject({ kind: 'ended', job: { status: outcome } });
  return { id: job.id, key: job.key, path: job.path };
}

function janitor(t: TestApp, policy: Partial<RetentionPolicy> = {}, opts: { batchSize?: number; maxBatches?: number; outputs?: Pick<OutputStore, 'remove'> } = {}) {
  const { outputs, ...rest } = opts;
  return new RetentionJanitor(t.store, outputs ?? t.outputs, t.clock, silentLog, { ...DEFAULTS, ...policy }, { intervalMs: 60_000, ...rest });
}

const fetchOutput = (t: TestApp, path: string) => t.app.inject({ method: 'GET', url: path });
const listed = async (t: TestApp) => (await get(t, '/jobs?limit=100')).json<{ items: { job_id: string }[] }>().items.map((j) => j.job_id);
const nothing: RetentionReport = {
  outputsExpired: 0,
  jobsDeleted: 0,
  assetsDeleted: 0,
  assetsTombstoned: 0,
  tombstonesDeleted: 0,
  webhookLogsDeleted: 0,
  idempotencyKeysDeleted: 0,
  filesRemoved: 0,
};

describe.each(backends)('the retention janitor on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it("expires a finished job's outputs after output_retention_days: 410, files gone, the job still shown; a younger job untouched", async () => {
    t = await createTestApp({ backend });
    const old = await finished(t);
    const oldFailed = await finished(t, 'failed');
    t.clock.advance(20 * DAY);
    const young = await finished(t);
    t.clock.advance(10 * DAY + 1);
    // A failed job's files went with its end (the worker removes them): only the completed one's are left to remove.
    expect(await janitor(t).sweep()).toEqual({ ...nothing, outputsExpired: 2, filesRemoved: 1 });

    const res = await fetchOutput(t, old.path);
    expect(res.statusCode).toBe(410);
    expect(res.json()).toEqual({ error: 'this output file has expired: the server keeps the outputs of a finished job for a limited time' });
    expect(existsSync(t.outputs.dir(old.key))).toBe(false);
    // A failed job's URLs were 404 from its end, and stay 404 (not 410) once it is marked expired.
    expect((await fetchOutput(t, oldFailed.path)).statusCode).toBe(404);
    // The job itself stays until job_retention_days, with its result as it was.
    const job = await get(t, `/jobs/${old.id}`);
    expect(job.statusCode).toBe(200);
    expect(job.json()).toMatchObject({ status: 'completed', result: { urls: [`${PUBLIC_URL}${old.path}`] } });

    expect((await fetchOutput(t, young.path)).statusCode).toBe(200);
    expect(existsSync(t.outputs.dir(young.key))).toBe(true);
    // Nothing new is due: a second sweep changes nothing.
    expect(await janitor(t).sweep()).toEqual(nothing);
    // An unknown key is still a 404, not a 410.
    expect((await fetchOutput(t, young.path.replace(young.key, 'A'.repeat(32)))).statusCode).toBe(404);
  });

  it('deletes finished jobs after job_retention_days: 404, gone from the list, their files gone, the ledger intact', async () => {
    t = await createTestApp({ backend });
    const done = await finished(t);
    const failed = await finished(t, 'failed');
    const before = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === done.id || e.jobId === failed.id);
    expect(before.map((e) => e.kind).sort()).toEqual(['charge', 'hold', 'hold', 'release']);
    t.clock.advance(91 * DAY);
    const young = await finished(t);
    // Job rows first: a job past both lifetimes goes with its files in one step.
    expect(await janitor(t).sweep()).toEqual({ ...nothing, jobsDeleted: 2, filesRemoved: 1 });

    for (const id of [done.id, failed.id]) expect(errorOf(await get(t, `/jobs/${id}`), 404)).toMatch(/not found/);
    expect(await listed(t)).toEqual([young.id]);
    expect((await fetchOutput(t, done.path)).statusCode).toBe(404);
    expect(existsSync(t.outputs.dir(done.key))).toBe(false);
    // Usage and balances read the ledger, which keeps every entry of the deleted jobs.
    const after = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === done.id || e.jobId === failed.id);
    expect(after).toEqual(before);
    expect((await get(t, `/jobs/${young.id}`)).statusCode).toBe(200);
  });

  it('never touches an unfinished job, however old, nor its files', async () => {
    t = await createTestApp({ backend });
    const run = await running(t);
    const queued = (await generate(t, MODEL, { prompt: 'waiting' })).json<{ job_id: string }>().job_id;
    t.clock.advance(3650 * DAY);
    const all = { outputDays: 1, jobDays: 1, assetDays: 1, webhookLogDays: 1, idempotencyKeyHours: 1 };
    expect(await janitor(t, all).sweep()).toEqual(nothing);
    expect((await get(t, `/jobs/${run.id}`)).json()).toMatchObject({ status: 'sampling' });
    expect((await get(t, `/jobs/${queued}`)).json()).toMatchObject({ status: 'queued' });
    expect((await fetchOutput(t, run.path)).statusCode).toBe(200);
    // Once it ends, its lifetime starts from its end, not its creation.
    expect(await t.services.runs.complete(run.claimed, 'sampling', { urls: [run.path] })).toMatchObject({ kind: 'ended' });
    expect(await janitor(t, all).sweep()).toEqual(nothing);
    t.clock.advance(DAY + 1);
    expect(await janitor(t, all).sweep()).toEqual({ ...nothing, jobsDeleted: 1, filesRemoved: 1 });
  });

  it('keeps everything forever when every lifetime is 0', async () => {
    t = await createTestApp({ backend });
    const job = await finished(t, 'completed', HOOK);
    const asset = (await uploadAsset(t.app, t.token, { bytes: png, filename: 'a.png' })).json<{ id: string }>();
    t.clock.advance(36_500 * DAY);
    const forever = { outputDays: 0, jobDays: 0, assetDays: 0, webhookLogDays: 0 };
    expect(await janitor(t, forever).sweep()).toEqual(nothing);
    expect((await get(t, `/jobs/${job.id}`)).statusCode).toBe(200);
    expect((await fetchOutput(t, job.path)).statusCode).toBe(200);
    expect((await get(t, `/assets/${asset.id}`)).statusCode).toBe(200);
    expect(await t.store.webhooks.listForJob(job.id)).toHaveLength(1);
  });

  it('never deletes a job whose webhook is pending; deletes finished delivery logs after webhook_log_retention_days, never pending ones', async () => {
    t = await createTestApp({ backend });
    const sent = await finished(t, 'completed', HOOK);
    const now = () => msToMicros(t.clock.nowMs());
    const [delivery] = await t.store.webhooks.claimDue(now(), now() + 60_000_000, 10);
    expect(delivery?.jobId).toBe(sent.id);
    const attempt = { attempt: 1, attemptedAt: now(), statusCode: 200, error: null, durationMs: 5, nextRetryAt: null };
    expect(await t.store.webhooks.recordAttempt({ deliveryId: delivery!.id, leaseUntil: now() + 60_000_000, attempt, state: 'delivered' })).toBe(true);
    const pending = await finished(t, 'completed', HOOK);

    t.clock.advance(31 * DAY);
    const logs = await janitor(t, { outputDays: 0 }).sweep();
    expect(logs).toEqual({ ...nothing, webhookLogsDeleted: 1 });
    expect(await t.store.webhooks.listForJob(sent.id)).toEqual([]);
    expect((await t.store.webhooks.listForJob(pending.id)).map((d) => d.state)).toEqual(['pending']);

    t.clock.advance(60 * DAY);
    expect(await janitor(t, { outputDays: 0 }).sweep()).toEqual({ ...nothing, jobsDeleted: 1, filesRemoved: 1 });
    expect((await get(t, `/jobs/${sent.id}`)).statusCode).toBe(404);
    // Its event still goes out, and the receiver may read the job when it arrives.
    expect((await get(t, `/jobs/${pending.id}`)).statusCode).toBe(200);
    expect((await t.store.webhooks.listForJob(pending.id)).map((d) => d.state)).toEqual(['pending']);
  });

  it('deletes assets after asset_retention_days as DELETE would: at once, or as a tombstone while a job may read the file', async () => {
    t = await createTestApp({ backend });
    const upload = async () => {
      const a = (await uploadAsset(t.app, t.token, { bytes: png, filename: 'a.png' })).json<{ id: string; image_url: string }>();
      return { id: a.id, url: a.image_url, key: new URL(a.image_url).pathname.split('/')[3]! };
    };
    const free = await upload();
    t.clock.advance(11 * DAY);
    expect(await janitor(t, { assetDays: 10 }).sweep()).toEqual({ ...nothing, assetsDeleted: 1, filesRemoved: 1 });
    expect((await get(t, `/assets/${free.id}`)).statusCode).toBe(404);
    expect(existsSync(t.outputs.dir(free.key))).toBe(false);

    const held = await upload();
    // An unfinished job of the workspace may have been given its URL: the file stays.
    const named = await generate(t, 'image/vendor-a/model-a-2/medium', { prompt: 'p', aspect_ratio: '1:1', resolution: '1K', image_url: held.url });
    expect(named.statusCode).toBe(200);
    const queued = named.json<{ job_id: string }>().job_id;
    t.clock.advance(5 * DAY);
    const young = await upload();
    t.clock.advance(5 * DAY + 1);
    expect(await janitor(t, { assetDays: 10 }).sweep()).toEqual({ ...nothing, assetsTombstoned: 1 });
    expect((await get(t, `/assets/${held.id}`)).statusCode).toBe(404);
    expect((await get(t, `/assets/${young.id}`)).statusCode).toBe(200);
    expect(existsSync(t.outputs.dir(held.key))).toBe(true);
    expect(await t.services.assets.readInput(held.url, 'image_url')).toEqual(png);
    // The tombstone stays while the job has not ended...
    expect(await janitor(t, { assetDays: 10 }).sweep()).toEqual(nothing);
    expect((await t.store.assets.findAssetByKey(held.key))?.deletedAt).not.toBeNull();
    // ...and goes with its file once it has.
    expect((await del(t, `/jobs/${queued}`)).statusCode).toBe(200);
    expect(await janitor(t, { assetDays: 10 }).sweep()).toEqual({ ...nothing, tombstonesDeleted: 1, filesRemoved: 1 });
    expect(await t.store.assets.findAssetByKey(held.key)).toBeUndefined();
    expect(existsSync(t.outputs.dir(held.key))).toBe(false);
  });

  it('removes the tombstones DELETE /assets/{id} leaves even when assets live forever', async () => {
    t = await createTestApp({ backend });
    const a = (await uploadAsset(t.app, t.token, { bytes: png, filename: 'a.png' })).json<{ id: string; image_url: string }>();
    const key = new URL(a.image_url).pathname.split('/')[3]!;
    const queued = (await generate(t, MODEL, { prompt: 'waiting' })).json<{ job_id: string }>().job_id;
    expect((await del(t, `/assets/${a.id}`)).statusCode).toBe(200);
    expect(await janitor(t).sweep()).toEqual(nothing);
    expect(existsSync(t.outputs.dir(key))).toBe(true);
    expect((await del(t, `/jobs/${queued}`)).statusCode).toBe(200);
    expect(await janitor(t).sweep()).toEqual({ ...nothing, tombstonesDeleted: 1, filesRemoved: 1 });
    expect(await t.store.assets.findAssetByKey(key)).toBeUndefined();
    expect(existsSync(t.outputs.dir(key))).toBe(false);
  });

  it('walks tombstones that share one deletion time across batch edges: none passed over', async () => {
    t = await createTestApp({ backend });
    const keys: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const a = (await uploadAsset(t.app, t.token, { bytes: png, filename: `a${i}.png` })).json<{ id: string; image_url: string }>();
      ids.push(a.id);
      keys.push(new URL(a.image_url).pathname.split('/')[3]!);
    }
    const queued = (await generate(t, MODEL, { prompt: 'waiting' })).json<{ job_id: string }>().job_id;
    // The clock stands still: all five tombstones have one deleted_at, as one sweep's would.
    for (const id of ids) expect((await del(t, `/assets/${id}`)).statusCode).toBe(200);
    expect((await del(t, `/jobs/${queued}`)).statusCode).toBe(200);
    // Batches of 2: the ties run over two batch edges.
    expect(await janitor(t, {}, { batchSize: 2 }).sweep()).toEqual({ ...nothing, tombstonesDeleted: 5, filesRemoved: 5 });
    for (const key of keys) expect(await t.store.assets.findAssetByKey(key)).toBeUndefined();
  });

  it('remembers Idempotency-Keys for idempotency_key_hours, and prunes them past it', async () => {
    t = await createTestApp({ backend, idempotencyKeyHours: 2 });
    expect(t.services.idempotency.windowMs).toBe(2 * HOUR);
    const send = (prompt: string) => generate(t, MODEL, { prompt }, { 'idempotency-key': 'k-1' });
    const first = await send('a');
    expect(first.statusCode).toBe(200);
    t.clock.advance(HOUR);
    expect(errorOf(await send('b'), 422)).toMatch(/in the last 2 hours/);
    t.clock.advance(HOUR + 1000);
    expect(await t.store.idempotency.get(t.workspaceId, 'k-1')).toBeDefined();
    expect(await janitor(t, { idempotencyKeyHours: 2 }).sweep()).toEqual({ ...nothing, idempotencyKeysDeleted: 1 });
    expect(await t.store.idempotency.get(t.workspaceId, 'k-1')).toBeUndefined();
    const again = await send('b');
    expect(again.statusCode).toBe(200);
    expect(again.json<{ job_id: string }>().job_id).not.toBe(first.json<{ job_id: string }>().job_id);
  });

  it('prunes more rows than one batch over several batches and sweeps', async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 4, maxBackloggedJobs: 100 } });
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await finished(t));
    t.clock.advance(91 * DAY);
    const policy = { outputDays: 0 };
    // One batch per sweep: the rest waits for the next sweep.
    expect((await janitor(t, policy, { batchSize: 3, maxBatches: 1 }).sweep()).jobsDeleted).toBe(3);
    expect((await janitor(t, policy, { batchSize: 3, maxBatches: 1 }).sweep()).jobsDeleted).toBe(3);
    expect(await listed(t)).toHaveLength(1);
    const last = await finished(t);
    t.clock.advance(91 * DAY);
    // Batches until none is left: the straggler and the next one, in one sweep.
    expect((await janitor(t, policy, { batchSize: 1 }).sweep()).jobsDeleted).toBe(2);
    expect(await listed(t)).toEqual([]);
    for (const m of [...made, last]) expect(existsSync(t.outputs.dir(m.key))).toBe(false);
  });

  it('runs a sweep at start and then every interval, logging one line of counts each, until stopped', async () => {
    t = await createTestApp({ backend });
    const job = await finished(t);
    t.clock.advance(31 * DAY);
    const lines: { fields: Record<string, unknown>; msg: string }[] = [];
    const log = { ...silentLog, info: (fields: Record<string, unknown>, msg: string) => void lines.push({ fields, msg }) };
    const loop = new RetentionJanitor(t.store, t.outputs, t.clock, log, DEFAULTS, { intervalMs: 60_000 });
    loop.start();
    await waitFor(async () => lines.length === 1, 'the first sweep');
    expect(lines[0]).toEqual({ msg: 'retention janitor swept', fields: { ...nothing, outputsExpired: 1, filesRemoved: 1 } });
    expect((await fetchOutput(t, job.path)).statusCode).toBe(410);
    await waitFor(async () => t.clock.sleepers === 1, 'the janitor to wait for its interval');
    t.clock.advance(60_000);
    await waitFor(async () => lines.length === 2, 'the second sweep');
    expect(lines[1]!.fields).toEqual(nothing);
    await loop.stop();
  });

  it('runs every other phase when one fails, logging the phase by name and no data', async () => {
    t = await createTestApp({ backend });
    const job = await finished(t);
    t.clock.advance(91 * DAY);
    const real = t.store.retention;
    // The job deletion fails (as a locked table or a bad row would); the rest of the store is real.
    const retention = new Proxy(real, {
      get: (target, prop: keyof typeof real) =>
        prop === 'deleteJobs' ? () => Promise.reject(new Error('deleting jobs failed')) : (target[prop] as (...a: unknown[]) => unknown).bind(target),
    });
    const errors: { fields: Record<string, unknown>; msg: string }[] = [];
    const log = { ...silentLog, error: (fields: Record<string, unknown>, msg: string) => void errors.push({ fields, msg }) };
    const store = { retention, transaction: t.store.transaction.bind(t.store) };
    const failing = new RetentionJanitor(store, t.outputs, t.clock, log, DEFAULTS, { intervalMs: 60_000 });
    // The phases after the failing one ran: the output expired.
    expect(await failing.sweep()).toEqual({ ...nothing, outputsExpired: 1, filesRemoved: 1 });
    expect(await failing.sweep()).toEqual(nothing);
    expect(errors).toEqual([
      { msg: 'retention janitor phase failed', fields: { phase: 'jobs', err: { message: 'deleting jobs failed' } } },
      { msg: 'retention janitor phase failed', fields: { phase: 'jobs', err: { message: 'deleting jobs failed' } } },
    ]);
    expect((await fetchOutput(t, job.path)).statusCode).toBe(410);
    expect(await janitor(t).sweep()).toEqual({ ...nothing, jobsDeleted: 1 });
  });

  // Only where locks wait asynchronously (PostgreSQL): on SQLite one store's transactions are
  // serial, so two janitors there would prove nothing about two processes.
  it.runIf(backend.asyncLocks)('lets two janitors sweep at once: every row and file pruned exactly once, no deadlock', async () => {
    // The second janitor has a store handle of its own, as another process would: its own pool,
    // its own transactions.
    let reopen: (() => Promise<Store>) | undefined;
    t = await createTestApp({
      backend: {
        ...backend,
        async create() {
          const db = await backend.create();
          reopen = db.open;
          return db;
        },
      },
    });
    const other = await reopen!();
    const made = [];
    for (let i = 0; i < 24; i++) made.push(await finished(t));
    const removed: string[] = [];
    const counting: Pick<OutputStore, 'remove'> = {
      remove: async (key) => {
        removed.push(key);
        await t.outputs.remove(key);
      },
    };
    const pair = (policy: Partial<RetentionPolicy>) => [
      janitor(t, policy, { batchSize: 2, outputs: counting }),
      new RetentionJanitor(other, counting, t.clock, silentLog, { ...DEFAULTS, ...policy }, { intervalMs: 60_000, batchSize: 2 }),
    ];
    t.clock.advance(31 * DAY);
    const expiring = await Promise.all(pair({ jobDays: 0 }).map((j) => j.sweep()));
    expect(expiring.reduce((n, r) => n + r.outputsExpired, 0)).toBe(24);
    expect(new Set(removed).size).toBe(24);
    expect(removed).toHaveLength(24);
    t.clock.advance(60 * DAY);
    const deleting = await Promise.all(pair({}).map((j) => j.sweep()));
    expect(deleting.reduce((n, r) => n + r.jobsDeleted, 0)).toBe(24);
    // Their outputs had expired, and their files were removed then: none is removed twice.
    expect(removed).toHaveLength(24);
    expect(await listed(t)).toEqual([]);
    for (const m of made) expect(existsSync(t.outputs.dir(m.key))).toBe(false);
    await other.close();
  });
});
