import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, generate } from '../helpers/app.js';
import {
  A2_PATHS,
  GENERATION_PATHS,
  MINIMAL,
  PENDING_STATUSES,
  UUID,
  accept,
  openGen,
  reject,
} from './generate-support.js';
import type { Gen } from './generate-support.js';

/** What every generation endpoint of spec 4.2 has in common: the Job it answers, closed bodies, auth. */

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_Z_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let g: Gen;
beforeAll(async () => {
  g = await openGen();
});
afterAll(() => g.t.close());

describe.each(GENERATION_PATHS)('POST /generate/%s', (path) => {
  it('answers 200 with a pending Job: uuid job_id, ISO created_at with Z, completed_at and result null, type = model path', async () => {
    const { res, job, stored } = await accept(g, path, MINIMAL[path]);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(job.job_id).toMatch(UUID_RE);
    expect(PENDING_STATUSES).toContain(job.status);
    expect(job.created_at).toMatch(ISO_Z_RE);
    expect(Number.isNaN(Date.parse(job.created_at as string))).toBe(false);
    expect(job).toHaveProperty('completed_at', null);
    expect(job).toHaveProperty('result', null);
    expect(job.type).toBe(path);
    expect(job).not.toHaveProperty('error');
    expect(Object.keys(job).sort()).toEqual(['completed_at', 'created_at', 'job_id', 'result', 'status', 'type']);
    // The job in the store is the one described.
    expect(stored.id).toBe(job.job_id);
    expect(stored.type).toBe(path);
    expect(stored.status).toBe(job.status);
    expect(stored.webhookUrl).toBeNull();
    expect(stored.zeroDataRetention).toBe(false);
  });

  it('gives every job its own id', async () => {
    const a = await accept(g, path, MINIMAL[path]);
    const b = await accept(g, path, MINIMAL[path]);
    expect(a.job.job_id).not.toBe(b.job.job_id);
  });

  it('refuses an unknown top-level property with 400 naming it', async () => {
    await reject(g, path, { ...MINIMAL[path], surprise_field: 1 }, 'surprise_field');
  });

  it('refuses an unknown property even when it is null', async () => {
    await reject(g, path, { ...MINIMAL[path], extra_knob: null }, 'extra_knob');
  });

  it.each(['__proto__', 'constructor'])('refuses %s as an unknown property', async (key) => {
    const payload = `${JSON.stringify(MINIMAL[path]).slice(0, -1)},${JSON.stringify(key)}:{"prompt":"x"}}`;
    const res = await g.t.app.inject({
      method: 'POST',
      url: `/generate/${path}`,
      headers: { authorization: `Bearer ${g.t.token}`, 'content-type': 'application/json' },
      payload,
    });
    expect(errorOf(res, 400)).toContain(key);
  });

  it('refuses a camelCase spelling of a required field as unknown (no silent renaming)', async () => {
    await reject(g, path, { ...MINIMAL[path], Prompt: 'x' }, 'Prompt');
  });

  it.each([
    ['an array', []],
    ['a string', 'a red fox'],
    ['a number', 42],
    ['null', null],
  ])('refuses a body that is %s with 400', async (_what, body) => {
    errorOf(await generate(g.t, path, body), 400);
  });

  it('refuses malformed JSON with 400', async () => {
    const res = await g.t.app.inject({
      method: 'POST',
      url: `/generate/${path}`,
      headers: { authorization: `Bearer ${g.t.token}`, 'content-type': 'application/json' },
      payload: '{"prompt": ',
    });
    errorOf(res, 400);
  });

  it('refuses an empty body with 400', async () => {
    const res = await g.t.app.inject({
      method: 'POST',
      url: `/generate/${path}`,
      headers: { authorization: `Bearer ${g.t.token}`, 'content-type': 'application/json' },
      payload: '',
    });
    errorOf(res, 400);
  });

  it('answers 401 without a token, before looking at an invalid body', async () => {
    const res = await generate(g.t, path, { nonsense: true }, { authorization: '' });
    errorOf(res, 401);
    const noHeader = await g.t.app.inject({
      method: 'POST',
      url: `/generate/${path}`,
      headers: { 'content-type': 'application/json' },
      payload: '{"not json',
    });
    errorOf(noHeader, 401);
  });

  it('answers 401 for an unknown token even with an invalid body and invalid headers', async () => {
    const res = await generate(g.t, path, [], { 'x-webhook-url': 'garbage' }, 'not-a-real-token');
    errorOf(res, 401);
  });
});

describe.each(A2_PATHS)('POST /generate/%s nested objects are closed', (path) => {
  const base = MINIMAL[path]!;

  it('refuses an unknown property inside a styles item, naming it', async () => {
    await reject(g, path, { ...base, styles: [{ id: 's', strength: 1, weight: 2 }] }, 'weight');
  });

  it('refuses an unknown property inside an image_style_references item, naming it', async () => {
    await reject(g, path, { ...base, image_style_references: [{ url: 'https://example.com/a.png', mode: 'x' }] }, 'mode');
  });

  it('refuses an unknown property inside a moodboards item, naming it', async () => {
    await reject(g, path, { ...base, moodboards: [{ id: UUID, name: 'x' }] }, 'name');
  });

  it('names the position of the unknown nested property', async () => {
    const msg = await reject(g, path, { ...base, styles: [{ id: 's', strength: 1 }, { id: 't', strength: 1, foo: 1 }] }, 'foo');
    expect(msg).toContain('styles[1]');
  });
});
