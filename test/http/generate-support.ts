import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, errorOf, generate } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import type { JobRecord } from '../../src/store/store.js';

/** Shared fixtures for the generation endpoint tests (spec 4.2). */

export const A2_MEDIUM = 'image/vendor-a/model-a-2/medium';
export const A2_LARGE = 'image/vendor-a/model-a-2/large';
export const A2_TURBO = 'image/vendor-a/model-a-2/medium-turbo';
export const B1 = 'image/vendor-b/model-b-1';
export const C_EDIT = 'video/vendor-c/model-c-edit';
export const D_FAST = 'video/vendor-d/model-d-fast';
export const E1 = 'video/vendor-e/model-e-1';
export const F = 'video/vendor-f/model-f';
export const L1 = 'audio/vendor-l/model-l-1';
export const K1 = '3d/vendor-k/model-k-1';

export const A2_PATHS = [A2_MEDIUM, A2_LARGE, A2_TURBO] as const;

/** The smallest valid body of every generation endpoint: only the required fields. */
export const MINIMAL: Readonly<Record<string, Json>> = {
  [A2_MEDIUM]: { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' },
  [A2_LARGE]: { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' },
  [A2_TURBO]: { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' },
  [B1]: { prompt: 'a blue bird' },
  [C_EDIT]: { prompt: 'make it snow', init_video: 'https://example.com/in.mp4' },
  [D_FAST]: { prompt: 'a wave breaking' },
  [E1]: { prompt: 'a cat jumping' },
  [F]: { prompt: 'a city at night' },
  [L1]: { prompt: 'rain on a tin roof' },
  'enhance/vendor-j/standard-enhance': { image_url: 'https://example.com/in.png', width: 2048, height: 1536, model: 'Standard V2' },
  'enhance/vendor-j/generative-enhance': { image_url: 'https://example.com/in.png', width: 2048, height: 1536, model: 'Redefine' },
  [K1]: { image_url: 'https://example.com/object.png' },
  'enhance/vendor-j/video-upscale': { video_url: 'https://example.com/in.mp4' },
};

export const GENERATION_PATHS = Object.keys(MINIMAL);

/** Statuses a job can be in before it reaches a terminal one (spec 3). */
export const PENDING_STATUSES = ['backlogged', 'queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete'];

export const UUID = '123e4567-e89b-42d3-a456-426614174000';
export const DATA_URI = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
export const ASSET_URL = 'https://assets.mediagen.test/uploads/3f1c2a9e.png';

/** An absolute https URL of exactly `length` characters. */
export function urlOfLength(length: number): string {
  const head = 'https://example.com/';
  if (length < head.length + 1) throw new Error(`a URL needs at least ${head.length + 1} characters`);
  return head + 'a'.repeat(length - head.length);
}

/** An array of `n` copies produced by `make`. */
export const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

export interface Gen {
  readonly t: TestApp;
  readonly apiUserId: string;
}

/** Styles every Gen's token may use in `styles[].id` (trained by its member; test/http/styles*.test.ts train real ones). */
export const STYLE_1 = '5f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f1';
export const STYLE_2 = '6a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';

export async function openGen(opts: Parameters<typeof createTestApp>[0] = {}): Promise<Gen> {
  const t = await createTestApp(opts);
  const auth = await t.services.identity.authenticate(`Bearer ${t.token}`);
  for (const id of [STYLE_1, STYLE_2]) {
    await t.store.styles.insertStyle(
      {
        id,
        workspaceId: auth.workspace.id,
        apiUserId: auth.apiUserId,
        trainedBy: auth.memberEmail,
        jobId: null,
        title: 'test style',
        model: 'flux_dev',
        type: null,
        triggerWord: null,
        urls: [],
        coverUrl: null,
        outputKey: null,
        artifact: { palette: [] },
      },
      0,
    );
  }
  return { t, apiUserId: auth.apiUserId };
}

export interface Accepted {
  readonly res: LightMyRequestResponse;
  readonly job: Json;
  readonly stored: JobRecord;
}

/**
 * POSTs a body that must be accepted: asserts 200, reads the stored job back and then deletes it,
 * so long tables of accepted bodies never pile up jobs against the per-account limits.
 */
export async function accept(
  g: Gen,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Accepted> {
  const res = await generate(g.t, path, body, headers);
  if (res.statusCode !== 200) throw new Error(`expected 200 from ${path}, got ${res.statusCode}: ${res.body}`);
  const job = res.json() as Json;
  const stored = await g.t.store.jobs.getJob(g.apiUserId, job.job_id as string);
  expect(stored, `job ${String(job.job_id)} is stored`).toBeDefined();
  await g.t.store.jobs.deleteJob(g.apiUserId, job.job_id as string);
  return { res, job, stored: stored! };
}

/** POSTs a body that must be refused with 400 `{error}` whose message names `field`; returns the message. */
export async function reject(
  g: Gen,
  path: string,
  body: unknown,
  field: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const res = await generate(g.t, path, body, headers);
  const message = errorOf(res, 400);
  expect(Object.keys(res.json() as Json)).toEqual(['error']);
  expect(message, `message names ${field}`).toContain(field);
  return message;
}

/**
 * One row of a field table: `patch` is merged over the minimal body (a key set to undefined is
 * dropped by JSON.stringify, i.e. removed); `field` is absent for a valid body, or the name the
 * 400 message must contain.
 */
export interface FieldCase {
  readonly name: string;
  readonly patch: Json;
  readonly field?: string;
}

export const ok = (name: string, patch: Json): FieldCase => ({ name, patch });
export const bad = (name: string, patch: Json, field: string): FieldCase => ({ name, patch, field });

/** Runs one FieldCase against `path`: the patched minimal body is accepted or refused naming the field. */
export async function runCase(g: Gen, path: string, c: FieldCase): Promise<void> {
  const body = { ...MINIMAL[path], ...c.patch };
  if (c.field === undefined) {
    const { stored } = await accept(g, path, body);
    // What was sent is what is stored (defaults come on top, never instead).
    for (const [k, v] of Object.entries(c.patch)) {
      if (v === undefined) continue;
      // A null seed asks for none in particular: one is drawn and recorded (docs/engine.md).
      if (k === 'seed' && v === null) expect(stored.request[k]).toEqual(expect.any(Number));
      else if (Array.isArray(v)) expect((stored.request[k] as unknown[]).length).toBe(v.length);
      else if (typeof v === 'object' && v !== null) expect(stored.request[k]).toMatchObject(v);
      else expect(stored.request[k]).toBe(v);
    }
  } else {
    await reject(g, path, body, c.field);
  }
}

export const valid = (cases: readonly FieldCase[]) => cases.filter((c) => c.field === undefined);
export const invalid = (cases: readonly FieldCase[]) => cases.filter((c) => c.field !== undefined);
