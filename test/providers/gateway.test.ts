import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { uploadAsset } from '../helpers/asset-files.js';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { freePort } from '../helpers/free-port.js';
import { startFakeOpenAi } from './fakes/fake-openai.js';
import type { FakeOpenAi } from './fakes/fake-openai.js';

const MODEL = 'image/vendor-b/model-b-1';


const ended = (t: TestApp, id: string) => jobEnd(t, id, 30_000);

describe('mediagen in front of another mediagen (type krea)', { timeout: 60_000 }, () => {
  let upstream: TestApp;
  let gateway: TestApp;

  beforeAll(async () => {
    // The upstream: a real mediagen with its local engine, listening, its outputs served at its own URL.
    const port = await freePort();
    const upstreamUrl = `http://127.0.0.1:${port}`;
    upstream = await createTestApp({ realClock: true, publicUrl: upstreamUrl, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), pollMs: 50 } });
    await upstream.app.listen({ port, host: '127.0.0.1' });
    gateway = await createTestApp({
      realClock: true,
      modelEngines: { [MODEL]: 'provider:origin' },
      providers: { providers: { origin: { type: 'krea', base_url: upstreamUrl, api_key_env: 'ORIGIN_TOKEN', poll_interval_ms: 50 } }, env: { ORIGIN_TOKEN: upstream.token } },
      worker: { pollMs: 50, log: silentLog },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it("runs a generation through the upstream's local engine: a real PNG here, each side's ledger charged once", async () => {
    const created = await generate(gateway, MODEL, { prompt: 'a lighthouse at dusk', width: 512, height: 512 });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json<{ job_id: string }>().job_id;
    const job = await ended(gateway, id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const url = new URL((job.result as { urls: string[] }).urls[0]!);
    const file = await gateway.app.inject({ method: 'GET', url: url.pathname });
    const meta = await sharp(file.rawPayload).metadata();
    expect({ format: meta.format, width: meta.width, height: meta.height }).toEqual({ format: 'png', width: 512, height: 512 });

    // The upstream ran the one job, for the gateway's workspace, and charged it once.
    const upstreamId = (await gateway.store.upstreams.find(id))!.id;
    const there = (await get(upstream, `/jobs/${upstreamId}`)).json<{ status: string }>();
    expect(there.status).toBe('completed');
    const upstreamEntries = await upstream.store.billing.entriesOfJob(upstreamId);
    expect(upstreamEntries.filter((e) => e.kind === 'charge')).toHaveLength(1);
    const gatewayEntries = await gateway.store.billing.entriesOfJob(id);
    expect(gatewayEntries.filter((e) => e.kind === 'charge')).toHaveLength(1);
    // Both at the same price rule here: the gateway's customer pays what the gateway's table says.
    expect(gatewayEntries.find((e) => e.kind === 'charge')!.amountMicros).toBe(upstreamEntries.find((e) => e.kind === 'charge')!.amountMicros);
    await expectLedgerConsistent(gateway.store, gateway.workspaceId);
    await expectLedgerConsistent(upstream.store, upstream.workspaceId);
    const details = (await get(gateway, `/jobs/${id}/details`)).json<{ upstream: Json }>();
    expect(details.upstream).toMatchObject({ provider: 'origin', id: upstreamId, status: 'completed' });
    expect(details.upstream.usage).toMatchObject({ cost_usd: expect.stringMatching(/^\d+\.\d{6}$/) });
  });
});

describe('media inputs at a provider', { timeout: 60_000 }, () => {
  let oai: FakeOpenAi;
  let t: TestApp;
  const EDIT = 'image/acme/edit-v1';
  beforeAll(async () => {
    oai = await startFakeOpenAi();
    t = await createTestApp({
      realClock: true,
      models: [
        {
          path: EDIT,
          kind: 'image',
          request: {
            type: 'object',
            properties: {
              prompt: { type: 'string', maxLength: 1000, description: 'What to change.' },
              image_url: { type: 'string', format: 'media-url', description: 'The image to edit.' },
            },
            required: ['prompt', 'image_url'],
          },
          price: { fixed: '0.04' },
          engine: 'provider:oai',
          upstream: { model: 'gpt-image-1', input: { prompt: '{{prompt}}', image: '{{image_url}}' } },
        },
      ],
      providers: { providers: { oai: { type: 'openai', base_url: oai.url, api_key_env: 'OAI_KEY', poll_interval_ms: 20 } }, env: { OAI_KEY: oai.apiKey } },
      worker: { pollMs: 50, log: silentLog },
    });
  });
  afterAll(async () => {
    await t?.close();
    await oai?.close();
  });

  it("sends an uploaded asset to the provider as its bytes, never as this server's URL", async () => {
    const png = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#c04020' } }).png().toBuffer();
    const uploaded = await uploadAsset(t.app, t.token, { bytes: png, filename: 'in.png', type: 'image/png' });
    expect(uploaded.statusCode, uploaded.body).toBe(200);
    const assetUrl = uploaded.json<{ image_url: string }>().image_url;
    const created = await generate(t, EDIT, { prompt: 'make it blue', image_url: assetUrl });
    expect(created.statusCode, created.body).toBe(200);
    const job = await ended(t, created.json<{ job_id: string }>().job_id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const sent = oai.requests.at(-1)!;
    expect(sent.path).toMatch(/\/images\/edits$/);
    expect(sent.files.map((f) => ({ field: f.field, type: f.type }))).toEqual([{ field: 'image', type: 'image/png' }]);
    expect(sent.files[0]!.bytes.equals(png)).toBe(true);
    expect(JSON.stringify(sent.body)).not.toContain('mediagen.test');
  });
});
