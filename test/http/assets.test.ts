import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { createTestApp, del, errorOf, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { assetFiles, form, uploadAsset } from '../helpers/asset-files.js';
import type { AssetFile } from '../helpers/asset-files.js';

type AssetBody = {
  id: string;
  image_url: string;
  uploaded_at: string;
  width: number | null;
  height: number | null;
  size_bytes: number;
  mime_type: string;
  description?: string;
  metadata: { kind: string; duration_seconds?: number; filename?: string };
};

let files: AssetFile[];
let fixtures: string;

beforeAll(async () => {
  fixtures = mkdtempSync(join(tmpdir(), 'mediagen-asset-files-'));
  files = await assetFiles(fixtures);
}, 60_000);

afterAll(() => rmSync(fixtures, { recursive: true, force: true }));

const upload = (t: TestApp, file: { bytes: Buffer; filename: string; type?: string }, extra: Record<string, string> = {}, token = t.token) =>
  uploadAsset(t.app, token, file, extra);

/** Key directories in the output store: an upload that failed must leave none. */
function storedKeys(t: TestApp): string[] {
  try {
    return readdirSync(t.outputs.root);
  } catch {
    return [];
  }
}

const pathOf = (url: string) => new URL(url).pathname;

describe.each(backends)('assets on $name', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ backend, assets: { maxBytes: 256 * 1024, quotaBytes: 2 * 1024 * 1024 } });
  });
  afterAll(() => t.close());

  it('stores every accepted kind, says what it is from its bytes, and serves it back byte for byte', async () => {
    for (const f of files) {
      const res = await upload(t, { bytes: f.bytes, filename: f.name }, { description: `a ${f.kind}` });
      expect(res.statusCode, `${f.name}: ${res.body}`).toBe(200);
      const asset = res.json<AssetBody>();
      expect(asset).toMatchObject({ mime_type: f.mime, width: f.width, height: f.height, size_bytes: f.bytes.length, description: `a ${f.kind}` });
      expect(asset.metadata.kind).toBe(f.kind);
      expect(asset.metadata.filename).toBe(f.name);
      if (f.seconds === null) expect(asset.metadata.duration_seconds).toBeUndefined();
      else expect(asset.metadata.duration_seconds).toBeCloseTo(f.seconds, 0);
      const served = await t.app.inject({ method: 'GET', url: pathOf(asset.image_url) });
      expect(served.statusCode).toBe(200);
      expect(served.rawPayload.equals(f.bytes), f.name).toBe(true);
      expect(served.headers['content-type']).toBe(f.mime);
    }
  });

  it('believes the bytes, not a spoofed file name or content type', async () => {
    const png = files.find((f) => f.mime === 'image/png')!;
    const res = await upload(t, { bytes: png.bytes, filename: 'clip.mp4', type: 'video/mp4' });
    expect(res.statusCode).toBe(200);
    expect(res.json<AssetBody>()).toMatchObject({ mime_type: 'image/png', width: 40, height: 30 });
    expect(res.json<AssetBody>().image_url).toMatch(/\/asset\.png$/);
  });

  it('refuses a truncated file and a file of a kind it does not take with 400, storing nothing', async () => {
    const before = storedKeys(t).length;
    const png = files.find((f) => f.mime === 'image/png')!;
    const truncated = await upload(t, { bytes: png.bytes.subarray(0, Math.floor(png.bytes.length / 2)), filename: 'half.png' });
    expect(errorOf(truncated, 400)).toMatch(/^the file is a truncated or damaged PNG image/);
    const gif = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } }).gif().toBuffer();
    expect(errorOf(await upload(t, { bytes: gif, filename: 'a.gif' }), 400)).toMatch(/GIF/);
    expect(errorOf(await upload(t, { bytes: Buffer.from('#EXTM3U\n#EXTINF:1,\nhttp://x/a.ts\n'), filename: 'a.m3u8' }), 400)).toMatch(/HLS playlist/);
    expect(errorOf(await upload(t, { bytes: Buffer.from('hello, world\n'), filename: 'a.txt' }), 400)).toMatch(/text/);
    expect(errorOf(await upload(t, { bytes: Buffer.alloc(0), filename: 'empty.png' }), 400)).toMatch(/empty/);
    expect(storedKeys(t).length).toBe(before);
  });

  it('answers a HEIC image the image library cannot decode with a 400 that says so', async () => {
    // An ISO-BMFF file with the `heic` brand: a HEIC image as far as its signature goes.
    const heic = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypheic\0\0\0\0mif1heic', 'latin1'), Buffer.alloc(64)]);
    const res = await upload(t, { bytes: heic, filename: 'IMG_0001.HEIC' });
    expect(errorOf(res, 400)).toMatch(/HEIC/);
  });

  it('refuses a file over asset_max_bytes with 413 and leaves nothing behind', async () => {
    const before = storedKeys(t).length;
    const big = await sharp({ create: { width: 600, height: 600, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();
    expect(big.length).toBeGreaterThan(256 * 1024);
    const res = await upload(t, { bytes: big, filename: 'big.png' });
    expect(errorOf(res, 413)).toMatch(/larger than the .* an asset may be/);
    expect(storedKeys(t).length).toBe(before);
  });

  it('refuses bad forms with 400 or 415, naming what is wrong', async () => {
    const auth = { authorization: `Bearer ${t.token}` };
    const json = await checkedInject(t.app, { method: 'POST', url: '/assets', payload: { file: 'x' }, headers: auth });
    expect(errorOf(json, 415)).toMatch(/multipart\/form-data/);
    const noFile = await form({ description: 'nothing' });
    expect(errorOf(await checkedInject(t.app, { method: 'POST', url: '/assets', ...noFile, headers: { ...noFile.headers, ...auth } }), 400)).toMatch(/no file/);
    const png = files.find((f) => f.mime === 'image/png')!;
    const extra = await form({ file: { bytes: png.bytes, filename: 'a.png' }, colour: 'red' });
    expect(errorOf(await checkedInject(t.app, { method: 'POST', url: '/assets', ...extra, headers: { ...extra.headers, ...auth } }), 400)).toMatch(/unknown field 'colour'/);
  });

  it('answers a store fault under an upload 503 with Retry-After, not as a bad form, and keeps no file', async () => {
    const before = storedKeys(t).length;
    const usedBytes = t.store.assets.usedBytes.bind(t.store.assets);
    t.store.assets.usedBytes = () => Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }));
    try {
      const png = files.find((f) => f.mime === 'image/png')!;
      const res = await upload(t, { bytes: png.bytes, filename: 'a.png' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBeDefined();
      expect(res.json<{ error: string }>().error).toBe('the server cannot store new uploads right now: its storage is failing; retry later');
    } finally {
      t.store.assets.usedBytes = usedBytes;
    }
    expect(storedKeys(t).length).toBe(before);
  });

  it('pages newest first with next_cursor, like GET /jobs', async () => {
    const other = await t.newWorkspace(`paging-${backend.name}`);
    const png = files.find((f) => f.mime === 'image/png')!;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await upload(t, { bytes: png.bytes, filename: `${i}.png` }, {}, other.token)).json<AssetBody>().id);
    const first = await get(t, '/assets?limit=2', other.token);
    const page1 = first.json<{ items: AssetBody[]; next_cursor: string | null }>();
    expect(page1.items.map((a) => a.id)).toEqual([ids[2], ids[1]]);
    expect(page1.next_cursor).toBe(page1.items[1]!.uploaded_at);
    const page2 = (await get(t, `/assets?limit=2&cursor=${encodeURIComponent(page1.next_cursor!)}`, other.token)).json<{ items: AssetBody[]; next_cursor: string | null }>();
    expect(page2).toEqual({ items: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
    expect(errorOf(await get(t, '/assets?limit=0', other.token), 400)).toMatch(/limit/);
  });

  it("keeps workspaces apart: another workspace's asset is 404 to read, list or delete", async () => {
    const a = await t.newWorkspace(`apart-a-${backend.name}`);
    const b = await t.newWorkspace(`apart-b-${backend.name}`);
    const png = files.find((f) => f.mime === 'image/png')!;
    const asset = (await upload(t, { bytes: png.bytes, filename: 'a.png' }, {}, a.token)).json<AssetBody>();
    expect(errorOf(await get(t, `/assets/${asset.id}`, b.token), 404)).toMatch(/not found/);
    expect(errorOf(await del(t, `/assets/${asset.id}`, b.token), 404)).toMatch(/not found/);
    expect((await get(t, '/assets', b.token)).json<{ items: unknown[] }>().items).toEqual([]);
    expect((await get(t, `/assets/${asset.id}`, a.token)).json<AssetBody>()).toEqual(asset);
  });

  it('answers a retried upload with the same Idempotency-Key with the first asset, and a different file under it with 422', async () => {
    const ws = await t.newWorkspace(`retry-${backend.name}`);
    const [png, jpeg] = [files.find((f) => f.mime === 'image/png')!, files.find((f) => f.mime === 'image/jpeg')!];
    const send = async (file: AssetFile) => {
      const { payload, headers } = await form({ file: { bytes: file.bytes, filename: file.name } });
      return checkedInject(t.app, { method: 'POST', url: '/assets', payload, headers: { ...headers, authorization: `Bearer ${ws.token}`, 'idempotency-key': 'upload-1' } });
    };
    const first = await send(png);
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await send(png);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(errorOf(await send(jpeg), 422)).toMatch(/Idempotency-Key/);
    expect((await get(t, '/assets', ws.token)).json<{ items: AssetBody[] }>().items).toHaveLength(1);
  });

  it('stops serving a deleted asset at once', async () => {
    const png = files.find((f) => f.mime === 'image/png')!;
    const asset = (await upload(t, { bytes: png.bytes, filename: 'a.png' })).json<AssetBody>();
    expect((await del(t, `/assets/${asset.id}`)).json()).toEqual({ success: true, message: 'asset deleted', id: asset.id, deleted: true });
    expect((await t.app.inject({ method: 'GET', url: pathOf(asset.image_url) })).statusCode).toBe(404);
    expect(errorOf(await get(t, `/assets/${asset.id}`), 404)).toMatch(/not found/);
    expect(errorOf(await del(t, `/assets/${asset.id}`), 404)).toMatch(/not found/);
  });
});

describe.each(backends)('the storage quota on $name', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend, assets: { quotaBytes: 100 * 1024 } });
  });
  afterAll(() => t.close());

  it('answers 413 with how much is used once a workspace is full, and has room again after a delete', async () => {
    const noisy = (seed: number) =>
      sharp({ create: { width: 150, height: 150, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 100 + seed, sigma: 50 } } }).png().toBuffer();
    const first = await upload(t, { bytes: await noisy(1), filename: 'one.png' });
    expect(first.statusCode).toBe(200);
    const used = first.json<AssetBody>().size_bytes;
    expect(used).toBeGreaterThan(50 * 1024);
    const second = await upload(t, { bytes: await noisy(2), filename: 'two.png' });
    expect(errorOf(second, 413)).toMatch(/quota/);
    expect(second.json()).toMatchObject({ used_bytes: used, quota_bytes: 100 * 1024 });
    await del(t, `/assets/${first.json<AssetBody>().id}`);
    expect((await upload(t, { bytes: await noisy(2), filename: 'two.png' })).statusCode).toBe(200);
  });

  it('lets only one of two uploads at once in when together they would pass the quota', async () => {
    const ws = await t.newWorkspace(`race-${backend.name}`);
    const noisy = (seed: number) =>
      sharp({ create: { width: 150, height: 150, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 90 + seed, sigma: 50 } } }).png().toBuffer();
    const [a, b] = await Promise.all([noisy(3), noisy(4)]);
    const answers = await Promise.all([upload(t, { bytes: a, filename: 'a.png' }, {}, ws.token), upload(t, { bytes: b, filename: 'b.png' }, {}, ws.token)]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 413]);
    const listed = (await get(t, '/assets', ws.token)).json<{ items: AssetBody[] }>().items;
    expect(listed).toHaveLength(1);
  });
});
