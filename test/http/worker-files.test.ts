import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { createJob, errorOf, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { uploadAsset } from '../helpers/asset-files.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { POOL, claimNow, pathOf, png, remoteApp, remoteJob, workerToken, wpost, wput } from '../helpers/remote-worker.js';

const LONG = { leaseMs: 3_600_000, timeoutMs: () => 3_600_000 };
const UPSCALE = 'enhance/vendor-j/video-upscale';
const TRAIN = 'loraTraining';
const K1 = '3d/vendor-k/model-k-1';

/** An MP4's first box: what the output sniffing reads (the file is not decoded). */
const mp4 = (size = 4096) => {
  const b = Buffer.alloc(size);
  b.writeUInt32BE(24, 0);
  b.write('ftypisom', 4, 'latin1');
  return b;
};

/**
 * The worker protocol's files (docs/workers.md): signed input URLs, output uploads (size limit,
 * bytes matching the name), previews, result shapes, styles of training jobs, metered billing.
 */
describe.each(backends)('worker protocol files on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  it('hands out a signed URL per http(s) input that serves it without auth, and refuses it expired, forged or once the job ended', async () => {
    t = await remoteApp({ backend, runPolicy: LONG });
    const token = await workerToken(t);
    const bytes = await png(12, 9);
    const asset = (await uploadAsset(t.app, t.token, { bytes, filename: 'in.png' })).json() as { image_url: string };
    const id = await remoteJob(t, { image_url: asset.image_url });
    const [job] = await claimNow(t, token);
    expect(Object.keys(job!.inputs)).toEqual(['image_url']);
    expect(job!.request.image_url).toBe(asset.image_url);
    const url = pathOf(job!.inputs.image_url!);
    expect(url).toMatch(new RegExp(`^/worker/v1/jobs/${id}/inputs/0\\?exp=\\d+&lease=${job!.lease_id}&tok=[0-9a-f-]+&sig=[0-9a-f]{64}$`));
    const ok = await t.app.inject({ method: 'GET', url });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toBe('image/png');
    expect(ok.rawPayload.equals(bytes)).toBe(true);

    const q = new URL(url, 'http://x').searchParams;
    const other = (await t.services.workerTokens.create('other')).record.id;
    const forged = (params: Record<string, string>) => {
      const u = new URL(url, 'http://x');
      for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
      return t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
    };
    const flip = q.get('sig')!.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    expect(errorOf(await forged({ sig: flip }), 403)).toMatch(/not validly signed/);
    expect((await forged({ tok: other })).statusCode).toBe(403);
    expect((await forged({ exp: String(Number(q.get('exp')) + 60) })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: url.replace('/inputs/0', '/inputs/1') })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: url.split('?')[0]! })).statusCode).toBe(403);
    t.clock.advance(601_000);
    expect(errorOf(await t.app.inject({ method: 'GET', url }), 404)).toMatch(/expired/);
    t.clock.advance(-601_000);
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    // Once the job ends (here: failed), and once the token is revoked, the URL serves nothing.
    expect((await wpost(t, token, `/jobs/${id}/fail`, { lease_id: job!.lease_id, code: 'engine_failed', message: 'x' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(404);
  });

  it('answers 502 with the job error code when an input cannot be fetched, and 404 once the token is revoked', async () => {
    t = await remoteApp({ backend, runPolicy: LONG, allowPrivateUrls: true });
    const token = await workerToken(t);
    await remoteJob(t, { image_url: 'http://127.0.0.1:9/in.png' });
    const [job] = await claimNow(t, token);
    const res = await t.app.inject({ method: 'GET', url: pathOf(job!.inputs.image_url!) });
    expect(errorOf(res, 502)).toMatch(/^image_url: /);
    expect(res.json()).toMatchObject({ code: 'input_fetch_failed' });
    const tokenId = new URL(job!.inputs.image_url!).searchParams.get('tok')!;
    await t.services.workerTokens.revoke(tokenId);
    expect((await t.app.inject({ method: 'GET', url: pathOf(job!.inputs.image_url!) })).statusCode).toBe(404);
  });

  it('refuses an upload past worker_output_max_bytes (413), bytes that are not what the name says (415) and names that are no output (400)', async () => {
    t = await remoteApp({ backend, workerOutputMaxBytes: 64 * 1024 });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token);
    const big = Buffer.concat([await png(), Buffer.alloc(70 * 1024)]);
    expect(errorOf(await wput(t, token, id, 'output.png', job!.lease_id, big), 413)).toMatch(/65536 bytes/);
    // Chunked, without a Content-Length: cut when it passes the limit.
    const chunked = await checkedInject(t.app, {
      method: 'PUT',
      url: `/worker/v1/jobs/${id}/outputs/output.png?lease_id=${job!.lease_id}`,
      headers: { authorization: `Bearer ${token}` },
      payload: Readable.from([big.subarray(0, 40_000), big.subarray(40_000)]),
    });
    expect(errorOf(chunked, 413)).toMatch(/worker_output_max_bytes/);
    const jpeg = await sharp(await png()).jpeg().toBuffer();
    expect(errorOf(await wput(t, token, id, 'output.png', job!.lease_id, jpeg), 415)).toMatch(/the name says image\/png but the bytes are image\/jpeg/);
    expect(errorOf(await wput(t, token, id, 'output.png', job!.lease_id, Buffer.from('#EXTM3U\nhttp://x/a.ts\n')), 415)).toMatch(/HLS playlist/);
    expect(errorOf(await wput(t, token, id, 'output.png', job!.lease_id, Buffer.alloc(0)), 415)).toMatch(/not an output/);
    const bare = await checkedInject(t.app, { method: 'PUT', url: `/worker/v1/jobs/${id}/outputs/output.png?lease_id=${job!.lease_id}`, headers: { authorization: `Bearer ${token}` } });
    expect(bare.statusCode).toBe(415);
    expect(errorOf(await wput(t, token, id, 'output.txt', job!.lease_id, Buffer.from('hi')), 400)).toMatch(/no output extension/);
    expect((await wput(t, token, id, '.hidden.png', job!.lease_id, await png())).statusCode).toBe(400);
    expect(errorOf(await wput(t, token, id, 'output.png', '', await png()), 400)).toMatch(/lease_id/);
    // Nothing of the refused uploads is left, and a good one (sent twice) is stored once.
    const key = (await t.store.queue.findJob(id))!.outputKey!;
    expect(readdirSync(t.outputs.dir(key))).toEqual([]);
    expect((await wput(t, token, id, 'output.png', job!.lease_id, await png(4, 4))).statusCode).toBe(201);
    expect((await wput(t, token, id, 'output.png', job!.lease_id, jpeg, { 'content-type': 'image/png' })).statusCode).toBe(415);
    const second = await png(6, 6);
    expect((await wput(t, token, id, 'output.png', job!.lease_id, second)).json()).toMatchObject({ size: second.length });
    expect(readdirSync(t.outputs.dir(key))).toEqual(['output.png']);
  });

  it('answers 413 over real HTTP the moment a chunked upload passes the limit, without waiting for the rest', async () => {
    t = await remoteApp({ backend, workerOutputMaxBytes: 64 * 1024 });
    const token = await workerToken(t);
    const id = await remoteJob(t);
    const [job] = await claimNow(t, token);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const head = await png();
    const answer = await new Promise<{ status: number; body: string; written: number }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'PUT', path: `/worker/v1/jobs/${id}/outputs/output.png?lease_id=${job!.lease_id}`, headers: { authorization: `Bearer ${token}` } });
      let answered = false;
      let written = 0;
      req.on('response', (res) => {
        answered = true;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, written }));
      });
      req.on('error', (err) => (answered ? undefined : reject(err)));
      req.write(head);
      const chunk = Buffer.alloc(16 * 1024, 7);
      const pump = () => {
        while (!answered && written < 16 * 1024 * 1024) {
          written += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
      };
      pump();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: expect.stringMatching(/worker_output_max_bytes/) });
    expect(answer.written).toBeLessThan(16 * 1024 * 1024);
    expect(readdirSync(t.outputs.dir((await t.store.queue.findJob(id))!.outputKey!))).toEqual([]);
  });

  it('shows an uploaded preview while the job runs, removes it when the outputs do not list it, and shapes results as in-process runs do', async () => {
    t = await remoteApp({ backend }, [K1]);
    const token = await workerToken(t);
    const id = ((await createJob(t, K1, { image_url: 'https://assets.example/product.png' })).json() as { job_id: string }).job_id;
    const [job] = await claimNow(t, token, { models: [K1] });
    const preview = await sharp(await png()).jpeg().toBuffer();
    expect((await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, status: 'intermediate-complete', preview: 'preview.jpg' })).statusCode).toBe(400);
    expect((await wput(t, token, id, 'preview.jpg', job!.lease_id, preview)).statusCode).toBe(201);
    const shown = await wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, status: 'intermediate-complete', preview: 'preview.jpg' });
    expect(shown.json()).toMatchObject({ status: 'intermediate-complete' });
    const running = (await get(t, `/jobs/${id}`)).json() as { status: string; result: { urls: string[] } };
    expect(running).toMatchObject({ status: 'intermediate-complete', result: { urls: [`http://mediagen.test/outputs/${(await t.store.queue.findJob(id))!.outputKey}/preview.jpg`] } });
    expect((await wput(t, token, id, 'model.glb', job!.lease_id, Buffer.concat([Buffer.from('glTF'), Buffer.alloc(60)]))).statusCode).toBe(201);
    expect((await wput(t, token, id, 'render.png', job!.lease_id, await png())).statusCode).toBe(201);
    const done = await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'model.glb', role: 'model' }, { name: 'render.png', role: 'preview' }] });
    expect(done.statusCode).toBe(200);
    const result = ((await get(t, `/jobs/${id}`)).json() as { result: { urls: Json[] } }).result;
    expect(result.urls.map((u) => [u.type, String(u.url).split('/').pop()])).toEqual([
      ['model', 'model.glb'],
      ['preview', 'render.png'],
    ]);
    expect(readdirSync(t.outputs.dir((await t.store.queue.findJob(id))!.outputKey!)).sort()).toEqual(['model.glb', 'render.png']);
  });

  it('completes a training job only with its style, which becomes a style later jobs name and their workers receive', async () => {
    t = await remoteApp({ backend }, [TRAIN]);
    const token = await workerToken(t);
    const created = await createJob(t, TRAIN, { name: 'Ink wash', urls: ['https://assets.example/style-1.png', 'https://assets.example/style-2.png'] });
    const trainId = (created.json() as { job_id: string }).job_id;
    const [job] = await claimNow(t, token, { models: [TRAIN] });
    expect(Object.keys(job!.inputs)).toEqual(['urls[0]', 'urls[1]']);
    expect((await wput(t, token, trainId, 'cover.png', job!.lease_id, await png())).statusCode).toBe(201);
    const body = { lease_id: job!.lease_id, outputs: [{ name: 'cover.png' }] };
    expect(errorOf(await wpost(t, token, `/jobs/${trainId}/complete`, body), 400)).toMatch(/trains a style/);
    const huge = { blob: 'x'.repeat(70 * 1024) };
    expect(errorOf(await wpost(t, token, `/jobs/${trainId}/complete`, { ...body, style: huge }), 400)).toMatch(/65536/);
    const artifact = { format: 'test', palette: [1, 2, 3] };
    expect((await wpost(t, token, `/jobs/${trainId}/complete`, { ...body, style: artifact })).statusCode).toBe(200);
    const trained = (await get(t, `/jobs/${trainId}`)).json() as { result: { style_id: string } };
    expect((await get(t, `/styles/${trained.result.style_id}`)).statusCode).toBe(200);

    const id = await remoteJob(t, { styles: [{ id: trained.result.style_id, strength: 1 }] });
    const [next] = await claimNow(t, token, { models: ['image/*'] });
    expect(next).toMatchObject({ id, styles: { [trained.result.style_id]: artifact } });
    expect((await wput(t, token, id, 'output.png', next!.lease_id, await png())).statusCode).toBe(201);
    const withStyle = await wpost(t, token, `/jobs/${id}/complete`, { lease_id: next!.lease_id, outputs: [{ name: 'output.png' }], style: artifact });
    expect(errorOf(withStyle, 400)).toMatch(/trains no style/);
  });

  it("charges a metered model's job by the main output's duration_us, once", async () => {
    t = await remoteApp({ backend }, [UPSCALE]);
    const token = await workerToken(t);
    const res = await createJob(t, UPSCALE, { video_url: 'https://assets.example/in.mp4' });
    expect(res.statusCode).toBe(200);
    const id = (res.json() as { job_id: string }).job_id;
    const [job] = await claimNow(t, token, { pool: POOL, models: [UPSCALE] });
    expect(Object.keys(job!.inputs)).toEqual(['video_url']);
    expect((await wput(t, token, id, 'output.mp4', job!.lease_id, mp4())).statusCode).toBe(201);
    const hold = (await t.store.billing.listEntries(t.workspaceId)).find((e) => e.jobId === id && e.kind === 'hold')!.amountMicros;
    expect((await wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.mp4', duration_us: 1_000_000 }] })).statusCode).toBe(200);
    const charges = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === id && e.kind === 'charge');
    expect(charges).toHaveLength(1);
    expect(charges[0]!.amountMicros).toBeLessThan(hold);
    expect(charges[0]!.amountMicros).toBeGreaterThan(0);
    await expectLedgerConsistent(t.store, t.workspaceId);
    expect(await claimNow(t, token, { pool: POOL })).toEqual([]);
  });
});
