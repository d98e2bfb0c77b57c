import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Mediagen, MediagenError, isTerminal, outputUrls } from '../../packages/client/src/index.js';
import type { Job } from '../../packages/client/src/index.js';
import { isPng, readPngSize } from '../helpers/media.js';
import { cleanup, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const BODY = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' } as const;

async function tokenOf(server: Server): Promise<string> {
  const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  return token!;
}

/**
 * The typed client against the compiled server: one that runs jobs, and one with `--role api`
 * whose jobs stay queued (nothing runs them), for lists, cancels, deletes and waits that end
 * by time.
 */
describe('the typed client against the real server', { timeout: 90_000 }, () => {
  let runs: Mediagen;
  let queues: Mediagen;
  let runsToken: string;
  let queuesToken: string;

  beforeAll(async () => {
    const worker = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '200']);
    const api = await startServer(['--port', '0', '--data-dir', tempDir(), '--role', 'api']);
    runsToken = await tokenOf(worker);
    queuesToken = await tokenOf(api);
    runs = new Mediagen({ baseUrl: worker.url, token: runsToken });
    queues = new Mediagen({ baseUrl: api.url, token: queuesToken });
  });
  afterAll(cleanup);

  it('generate with wait returns the completed job as GET shows it, and its output downloads as the PNG asked for', async () => {
    const seen: string[] = [];
    const job = await runs.generate(MODEL, BODY, { wait: true, onUpdate: (j) => seen.push(j.status) });
    expect(job.status).toBe('completed');
    expect(seen.at(-1)).toBe('completed');
    expect(job).toEqual(await runs.jobs.get(job.job_id));
    const [url] = outputUrls(job);
    const png = Buffer.from(await (await fetch(url!)).arrayBuffer());
    expect(isPng(png)).toBe(true);
    expect(readPngSize(png)).toEqual({ width: 1344, height: 756 });

    // Without onUpdate the wait starts in the POST (Prefer: wait) and ends the same way.
    const again = await runs.generate(MODEL, { ...BODY, seed: 3 }, { wait: true });
    expect(again).toMatchObject({ status: 'completed', type: MODEL });
    expect(again.completed_at).toEqual(expect.any(String));
  });

  it('generate without wait answers the new job at once, without the null fields of the creation answer', async () => {
    const job = await queues.generate(MODEL, BODY);
    expect(job.status).toBe('queued');
    expect(Object.keys(job)).not.toContain('completed_at');
    expect(Object.keys(job)).not.toContain('result');
  });

  it('a wait with a time limit returns the job as it is when the limit runs out', async () => {
    const job = await queues.generate(MODEL, BODY, { wait: 1 });
    expect(job.status).toBe('queued');
    expect((await queues.jobs.wait(job.job_id, { timeoutSeconds: 0.5 })).status).toBe('queued');
  });

  it("waits in the POST (Prefer: wait, Preference-Applied) and follows the server's event stream, without polling", async () => {
    const calls: { method: string; url: string; prefer: string | null; applied: string | null; type: string | null }[] = [];
    const recording = (base: Mediagen, token: string) =>
      new Mediagen({
        baseUrl: base.baseUrl,
        token,
        fetch: async (input, init) => {
          const res = await fetch(input, init);
          const headers = new Headers(init?.headers);
          calls.push({ method: init?.method ?? 'GET', url: String(input), prefer: headers.get('prefer'), applied: res.headers.get('preference-applied'), type: res.headers.get('content-type') });
          return res;
        },
      });
    const job = await recording(runs, runsToken).generate(MODEL, { ...BODY, seed: 21 }, { wait: true });
    expect(job.status).toBe('completed');
    expect(calls).toEqual([{ method: 'POST', url: `${runs.baseUrl}/generate/${MODEL}`, prefer: 'wait=60', applied: 'wait=60', type: expect.stringMatching(/^application\/json/) }]);

    calls.length = 0;
    const queued = await queues.generate(MODEL, BODY);
    const statuses: string[] = [];
    const waiting = recording(queues, queuesToken).jobs.wait(queued.job_id, { onUpdate: (j) => statuses.push(j.status) });
    // The cancel comes once the wait has seen the job on its stream.
    await vi.waitFor(() => expect(statuses).toEqual(['queued']), { timeout: 15_000, interval: 20 });
    await queues.jobs.cancel(queued.job_id);
    expect((await waiting).status).toBe('cancelled');
    expect(statuses).toEqual(['queued', 'cancelled']);
    expect(calls).toEqual([{ method: 'GET', url: `${queues.baseUrl}/jobs/${queued.job_id}/events`, prefer: null, applied: null, type: expect.stringMatching(/^text\/event-stream/) }]);
  });

  it('lists one page at a time and iterates every page, newest first', async () => {
    const ws = await queues.generate(MODEL, BODY);
    const ids = [ws.job_id];
    for (let i = 0; i < 4; i++) ids.push((await queues.generate(MODEL, { ...BODY, seed: i })).job_id);
    const page = await queues.jobs.list({ limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.next_cursor).toEqual(expect.any(String));
    const all: Job[] = [];
    for await (const job of queues.jobs.iterate({ limit: 2 })) all.push(job);
    const order = all.map((j) => j.job_id);
    expect(order.slice(0, 5)).toEqual([...ids].reverse());
    expect(new Set(order).size).toBe(order.length);
    expect((await queues.jobs.list({ types: [MODEL], status: 'completed' })).items).toEqual([]);
  });

  it('deletes a job; a second delete and a get are typed 404s', async () => {
    const job = await queues.generate(MODEL, BODY);
    expect(await queues.jobs.delete(job.job_id)).toEqual({ job_id: job.job_id, deleted: true });
    const err = await queues.jobs.get(job.job_id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediagenError);
    expect(err).toMatchObject({ status: 404, error: `job '${job.job_id}' not found` });
    await expect(queues.jobs.delete(job.job_id)).rejects.toMatchObject({ status: 404 });
    await expect(queues.jobs.wait(job.job_id)).rejects.toMatchObject({ status: 404 });
  });

  it('cancels a job, which keeps its record; waiting for it returns it cancelled; a second cancel is a 409 naming its status', async () => {
    const job = await queues.generate(MODEL, BODY);
    const waiting = queues.jobs.wait(job.job_id);
    const cancelled = await queues.jobs.cancel(job.job_id);
    expect(cancelled).toMatchObject({ job_id: job.job_id, status: 'cancelled' });
    expect((await waiting).status).toBe('cancelled');
    expect((await queues.jobs.get(job.job_id)).status).toBe('cancelled');
    await expect(queues.jobs.cancel(job.job_id)).rejects.toMatchObject({ status: 409, jobStatus: 'cancelled' });
  });

  it('uploads an asset from bytes and uses it as an input', async () => {
    const png = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#2040c0' } }).png().toBuffer();
    const asset = await runs.assets.upload(new Uint8Array(png), { filename: 'card.png', description: 'a blue card' });
    expect(asset).toMatchObject({ mime_type: 'image/png', width: 48, height: 32, description: 'a blue card' });
    expect(await runs.assets.get(asset.id)).toEqual(asset);
    const job = await runs.generate(MODEL, { ...BODY, image_url: asset.image_url }, { wait: true });
    expect(job.status).toBe('completed');
    const listed = [];
    for await (const a of runs.assets.iterate({ limit: 1 })) listed.push(a.id);
    expect(listed).toContain(asset.id);
  });

  it('a retired model is a typed 410 with its sunset date, replacement and migration URL', async () => {
    const err = await runs.generate('image/vendor-g/model-g-3', { prompt: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediagenError);
    expect(err).toMatchObject({
      status: 410,
      error: 'model_unavailable',
      message: 'image/vendor-g/model-g-3 was retired on 2026-05-13; use image/vendor-g/model-g-5-lite instead',
      sunsetDate: '2026-05-13',
      replacement: 'image/vendor-g/model-g-5-lite',
      migrationUrl: expect.stringMatching(/^http/),
    });
  });

  it('a refusal carries the server message; a wrong token is a 401', async () => {
    await expect(runs.generate(MODEL, { prompt: 'x' } as never)).rejects.toMatchObject({ status: 400, error: "missing required property 'aspect_ratio'" });
    const stranger = new Mediagen({ baseUrl: runs.baseUrl, token: 'mg_nope' });
    await expect(stranger.jobs.list()).rejects.toMatchObject({ status: 401 });
  });

  it('lists the models without a token, and shows the usage of completed jobs', async () => {
    const models = await new Mediagen({ baseUrl: runs.baseUrl }).models.list();
    expect(models.find((m) => m.id === MODEL)).toMatchObject({ available: true, kind: 'image' });
    expect(models.find((m) => m.id === 'image/vendor-g/model-g-3')).toMatchObject({ available: false });
    expect((await runs.models.get(MODEL)).id).toBe(MODEL);
    const job = await runs.generate(MODEL, { ...BODY, seed: 11 }, { wait: true });
    expect(isTerminal(job.status)).toBe(true);
    const page = await runs.usage({ limit: 1000 });
    expect(page.items.find((i) => i.job_id === job.job_id)).toMatchObject({ type: MODEL, cost_usd: expect.stringMatching(/^\d+\.\d{6}$/) });
    const items = [];
    for await (const item of runs.usageItems({ limit: 1 })) items.push(item);
    expect(items.length).toBe(page.items.length);
  });
});
