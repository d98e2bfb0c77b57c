import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { errorOf } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { uploadAsset } from '../helpers/asset-files.js';
import { hashToken } from '../../src/lib/ids.js';
import { INPUT_SERVES_MAX, inputSignature } from '../../src/services/remote/remote-inputs.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { claimNow, pathOf, png, remoteApp, remoteJob, workerToken } from '../helpers/remote-worker.js';

/** Signed input URLs (docs/workers.md, "Inputs"): bound to the claim that got them. */
describe.each(backends)('signed input URLs on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  async function claimedWithInput(): Promise<{ id: string; url: string; lease: string; token: string }> {
    const token = await workerToken(t);
    const asset = (await uploadAsset(t.app, t.token, { bytes: await png(12, 9), filename: 'in.png' })).json() as { image_url: string };
    const id = await remoteJob(t, { image_url: asset.image_url });
    const [job] = await claimNow(t, token);
    return { id, url: pathOf(job!.inputs.image_url!), lease: job!.lease_id, token };
  }

  /** The URL a worker holding `secret` could sign for `jobId` under `lease`. */
  function mint(url: string, secret: string, tokenId: string, lease: string): string {
    const u = new URL(url, 'http://x');
    const id = u.pathname.split('/')[4]!;
    const exp = Number(u.searchParams.get('exp'));
    const q = new URLSearchParams({ exp: String(exp), lease, tok: tokenId, sig: inputSignature(hashToken(secret), id, lease, 0, exp) });
    return `${u.pathname}?${q.toString()}`;
  }

  it("another token cannot read a job's inputs: the signature covers the lease, which only the claim's holder knows", async () => {
    t = await remoteApp({ backend, runPolicy: { leaseMs: 600_000 } });
    const { url } = await claimedWithInput();
    const other = await t.services.workerTokens.create('other', []);
    // Token B signs with its own key for a made-up lease: the job is not under that lease.
    const guessed = await t.app.inject({ method: 'GET', url: mint(url, other.token, other.record.id, '5d1c9a7e-2b3f-4e8d-9a6c-1f0e2d3c4b5a') });
    expect(errorOf(guessed, 404)).toMatch(/no longer holds the job/);
    // Nor does the lease-less signature of before pass.
    const u = new URL(url, 'http://x');
    u.searchParams.delete('lease');
    expect((await t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200);
  });

  it('a worker that lost the job reads nothing, even re-signing its URL; the new holder reads with its own', async () => {
    t = await remoteApp({ backend });
    const first = await claimedWithInput();
    t.clock.advance(31_000);
    await t.services.runs.reap();
    const [second] = await claimNow(t, first.token);
    expect(second).toMatchObject({ id: first.id, attempt: 2 });
    const tokenId = new URL(first.url, 'http://x').searchParams.get('tok')!;
    expect((await t.app.inject({ method: 'GET', url: first.url })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: mint(first.url, first.token, tokenId, first.lease) })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: pathOf(second!.inputs.image_url!) })).statusCode).toBe(200);
  });

  it(`loads at most ${INPUT_SERVES_MAX} inputs at once: one more is 503 with Retry-After; HEAD is 405 and loads nothing`, async () => {
    const bytes = await png(4, 4);
    const waiting: ServerResponse[] = [];
    let requests = 0;
    const origin = createServer((_req: IncomingMessage, res: ServerResponse) => {
      requests++;
      waiting.push(res);
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    try {
      t = await remoteApp({ backend, allowPrivateUrls: true, runPolicy: { leaseMs: 600_000 } });
      const token = await workerToken(t);
      await remoteJob(t, { image_url: `http://127.0.0.1:${(origin.address() as AddressInfo).port}/in.png` });
      const [job] = await claimNow(t, token);
      const url = pathOf(job!.inputs.image_url!);
      const head = await t.app.inject({ method: 'HEAD', url });
      expect(head.statusCode).toBe(405);
      expect(head.headers.allow).toBe('GET');
      expect(requests).toBe(0);
      const loading = Array.from({ length: INPUT_SERVES_MAX }, () => t.app.inject({ method: 'GET', url }));
      await waitFor(async () => requests === INPUT_SERVES_MAX, 'every permitted input load to reach the origin');
      const busy = await t.app.inject({ method: 'GET', url });
      expect(errorOf(busy, 503)).toMatch(/as many inputs as it may at once/);
      expect(busy.headers['retry-after']).toBe('2');
      for (const res of waiting) res.writeHead(200, { 'content-type': 'image/png' }).end(bytes);
      expect((await Promise.all(loading)).map((r) => r.statusCode)).toEqual(Array(INPUT_SERVES_MAX).fill(200));
      // The permits are back.
      const again = t.app.inject({ method: 'GET', url });
      await waitFor(async () => waiting.length === INPUT_SERVES_MAX + 1, 'the next load');
      waiting.at(-1)!.writeHead(200, { 'content-type': 'image/png' }).end(bytes);
      expect((await again).statusCode).toBe(200);
    } finally {
      origin.closeAllConnections();
      await new Promise((r) => origin.close(r));
    }
  });
});
