import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { FakeComfyui } from './fakes/fake-comfyui.js';

/**
 * examples/comfyui/mediagen.json as an operator copies it, its base_url pointed at a fake ComfyUI
 * (written from ComfyUI's server.py): whole jobs through the runtime, on both backends.
 */

const EXAMPLE_DIR = fileURLToPath(new URL('../../examples/comfyui/', import.meta.url));
const example = JSON.parse(readFileSync(`${EXAMPLE_DIR}mediagen.json`, 'utf8')) as { comfyui: Record<string, Record<string, unknown>>; models: unknown[] };

describe.each(backends)('ComfyUI engine runs: $name', { timeout: 60_000 }, (backend) => {
  let t: TestApp | undefined;
  let comfy: FakeComfyui | undefined;
  afterEach(async () => {
    await t?.close();
    await comfy?.close();
    t = comfy = undefined;
  });

  it('runs the example SDXL model: the request written into the workflow, the PNG stored and served, billed once', async () => {
    comfy = await new FakeComfyui().start();
    t = await createTestApp({
      backend,
      realClock: true,
      models: example.models,
      comfyui: { raw: { gpu: { ...example.comfyui.gpu, base_url: comfy.baseUrl, poll_interval_ms: 50 } }, dir: EXAMPLE_DIR },
      worker: { pollMs: 50, log: silentLog },
    });
    const res = await generate(t, 'image/comfy/sdxl', { prompt: 'a lighthouse at dusk', width: 768, steps: 12, seed: 42 });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json<{ job_id: string }>().job_id;
    const job = await jobEnd(t, id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const sent = comfy.prompts.at(-1)!.prompt;
    expect(sent['6']!.inputs.text).toBe('a lighthouse at dusk');
    expect(sent['5']!.inputs.width).toBe(768);
    expect(sent['3']!.inputs).toMatchObject({ steps: 12, seed: 42 });
    const file = await t.app.inject({ method: 'GET', url: new URL((job.result as { urls: string[] }).urls[0]!).pathname });
    expect((await sharp(file.rawPayload).metadata()).format).toBe('png');
    expect((await t.store.billing.entriesOfJob(id)).filter((e) => e.kind === 'charge')).toHaveLength(1);
    const timeline = (await get(t, `/jobs/${id}/details`)).json<{ timeline: { status: string }[] }>().timeline.map((s) => s.status);
    expect(timeline).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'completed']);
    // The prompt's id was stored with the job before it was queued.
    expect((await t.store.upstreams.find(id))!.id).toBe(comfy.prompts.at(-1)!.prompt_id);
  });
});
