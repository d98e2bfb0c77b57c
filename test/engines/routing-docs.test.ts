import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildEngineSet, UpstreamNudges, wireModels } from '../../src/app/engine-set.js';
import { loadConfig } from '../../src/config/config.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, generate, jobEnd, silentLog } from '../helpers/app.js';
import { startFakeFal } from '../providers/fakes/fake-fal.js';

/** docs/routing.md's worked example, started as written: loaded, wired, its engines built and routed, and a job run through it. */

const KEY = 'fal-key-id:0123456789abcdef0123';
const doc = readFileSync(join(__dirname, '../../docs/routing.md'), 'utf8');
const EXAMPLE = /```json\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('## Worked example')))![1]!;
type Example = { comfyui: unknown; providers: { fal: Record<string, unknown> }; models: { path: string }[]; model_engines: Record<string, unknown>; engine_limits: unknown; circuit: unknown };

/** The start-up log's routing lines of a config file holding `json`. */
async function routingLines(json: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mediagen-routing-'));
  try {
    const file = join(dir, 'mediagen.json');
    writeFileSync(file, json);
    const config = loadConfig({ configFile: file, env: { FAL_KEY: KEY } });
    const wiring = wireModels(config);
    const lines: string[] = [];
    const log = { info: (_o: object, msg: string) => void lines.push(msg), warn: () => undefined, error: () => undefined };
    const set = await buildEngineSet(config, wiring, { clock: systemClock, nudges: new UpstreamNudges(), log });
    try {
      expect(set.router.engineFor('image/acme/sdxl')?.name).toBe('comfyui:gpu');
      expect([...set.router.states().keys()]).toEqual(expect.arrayContaining(['comfyui:gpu', 'provider:fal']));
      expect(wiring.bindings.chain('image/acme/sdxl')).toEqual({ engines: ['comfyui:gpu', 'provider:fal'], spillAfterMs: 15000 });
    } finally {
      await set.close();
    }
    return lines.filter((l) => l.startsWith('routing:'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('docs/routing.md worked example', { timeout: 60_000 }, () => {
  it('"own GPUs first, fal on overflow" loads, wires both engines of the chain, and logs the chain once, named by its key', async () => {
    expect(await routingLines(EXAMPLE)).toEqual(["routing: model_engines 'image/acme/sdxl' -> comfyui:gpu -> provider:fal"]);
  });

  it('two bindings by exact paths each log their own line', async () => {
    const two = JSON.parse(EXAMPLE) as Example;
    two.models.push({ ...two.models[0]!, path: 'image/acme/sdxl-turbo' });
    two.model_engines['image/acme/sdxl-turbo'] = ['comfyui:gpu', 'provider:fal'];
    expect(await routingLines(JSON.stringify(two))).toEqual([
      "routing: model_engines 'image/acme/sdxl' -> comfyui:gpu -> provider:fal",
      "routing: model_engines 'image/acme/sdxl-turbo' -> comfyui:gpu -> provider:fal",
    ]);
  });

  it('runs a job as written: the ComfyUI box is down, so fal takes the job, charged once', async () => {
    const fal = await startFakeFal();
    const example = JSON.parse(EXAMPLE) as Example;
    const t = await createTestApp({
      realClock: true,
      allowPrivateUrls: true,
      models: example.models,
      comfyui: { raw: example.comfyui, dir: tmpdir() },
      routing: { model_engines: example.model_engines, engine_limits: example.engine_limits, circuit: example.circuit },
      // The example's fal, at the fake's address instead of fal's own.
      providers: { providers: { fal: { ...example.providers.fal, base_url: fal.url, storage_url: fal.storageUrl, poll_interval_ms: 20 } }, env: { FAL_KEY: KEY } },
      worker: { pollMs: 50, log: silentLog, allowPrivateUrls: true },
    });
    try {
      const res = await generate(t, 'image/acme/sdxl', { prompt: 'a lighthouse' });
      expect(res.statusCode, res.body).toBe(200);
      const id = res.json<{ job_id: string }>().job_id;
      const job = await jobEnd(t, id, 30_000);
      expect(job.status, JSON.stringify(job)).toBe('completed');
      expect(fal.submissions()).toBe(1);
      expect((await t.store.billing.entriesOfJob(id)).filter((e) => e.kind === 'charge')).toHaveLength(1);
      const route = (await t.services.routes.of(id))!;
      expect(route.tried.map((s) => [s.engine, s.outcome])).toEqual([
        ['comfyui:gpu', 'refused'],
        ['provider:fal', 'ran'],
      ]);
    } finally {
      await t.close();
      await fal.close();
      clearFalJwksCache();
    }
  });
});
