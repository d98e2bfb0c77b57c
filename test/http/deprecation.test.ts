import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, generate } from '../helpers/app.js';
import type { Json } from '../helpers/app.js';
import { D_FAST, F, GENERATION_PATHS, MINIMAL, accept, openGen } from './generate-support.js';
import type { Gen } from './generate-support.js';

/** Spec 7 and 9: retired models answer 410; deprecated ones carry Deprecation, Sunset and Link. */

const RETIRED = [
  {
    path: 'image/vendor-g/model-g-3',
    sunset_date: '2026-05-13',
    replacement: 'image/vendor-g/model-g-5-lite',
  },
  {
    path: 'video/vendor-g/model-h-1.0-lite',
    sunset_date: '2026-04-27',
    replacement: 'video/vendor-g/model-h-1.0-pro-fast',
  },
];

const CONFIG_DEPRECATION = {
  model: F,
  sunset_date: '2027-01-01',
  replacement: D_FAST,
  migration_url: 'https://example.com/migrate',
};

function expect410(res: Awaited<ReturnType<typeof generate>>): Json {
  expect(errorOf(res, 410)).toBe('model_unavailable');
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as Json;
  expect(body.reason).toBe('deprecated');
  expect(typeof body.message).toBe('string');
  expect((body.message as string).length).toBeGreaterThan(0);
  return body;
}

describe('retired models (spec 9 table)', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(RETIRED)('$path answers 410 with replacement and migration_url', async (m) => {
    const body = expect410(await generate(g.t, m.path, { prompt: 'x' }));
    expect(body).toEqual({
      error: 'model_unavailable',
      reason: 'deprecated',
      message: expect.any(String),
      sunset_date: m.sunset_date,
      replacement: m.replacement,
      migration_url: `http://mediagen.test/deprecations#${m.path}`,
    });
    expect(() => new URL(body.migration_url as string)).not.toThrow();
  });

  it('video/vendor-i/model-i-2 answers 410 without replacement or migration_url (it has no replacement)', async () => {
    const body = expect410(await generate(g.t, 'video/vendor-i/model-i-2', { prompt: 'x' }));
    expect(body).toEqual({
      error: 'model_unavailable',
      reason: 'deprecated',
      message: expect.any(String),
      sunset_date: '2026-04-27',
    });
    expect(body).not.toHaveProperty('replacement');
    expect(body).not.toHaveProperty('migration_url');
  });

  it.each([...RETIRED.map((m) => m.path), 'video/vendor-i/model-i-2'])(
    '%s answers 410 whatever the body: empty object, unknown fields, not JSON',
    async (path) => {
      expect410(await generate(g.t, path, {}));
      expect410(await generate(g.t, path, { anything: [1, 2, 3] }));
      const res = await g.t.app.inject({
        method: 'POST',
        url: `/generate/${path}`,
        headers: { authorization: `Bearer ${g.t.token}`, 'content-type': 'application/json' },
        payload: '{broken',
      });
      expect410(res);
    },
  );

  it.each([...RETIRED.map((m) => m.path), 'video/vendor-i/model-i-2'])('%s answers 401 without a token', async (path) => {
    errorOf(await generate(g.t, path, {}, { authorization: '' }), 401);
  });

  it.each(GENERATION_PATHS)('%s is not deprecated: no Deprecation, Sunset or Link header', async (path) => {
    const { res } = await accept(g, path, MINIMAL[path]);
    expect(res.headers).not.toHaveProperty('deprecation');
    expect(res.headers).not.toHaveProperty('sunset');
    expect(res.headers).not.toHaveProperty('link');
  });
});

describe('a model deprecated through config, with a migration_url', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen({ now: '2026-12-31T23:59:59.999Z', deprecations: [CONFIG_DEPRECATION] });
  });
  afterAll(() => g.t.close());
  afterEach(() => g.t.clock.set('2026-12-31T23:59:59.999Z'));

  it('answers 200 with Deprecation, Sunset (RFC 1123) and Link rel="deprecation" before the sunset date', async () => {
    const { res, job } = await accept(g, F, MINIMAL[F]);
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.sunset).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
    expect(res.headers.link).toBe('<https://example.com/migrate>; rel="deprecation"');
    expect(job.type).toBe(F);
    expect(job.completed_at).toBeNull();
  });

  it('answers 410 from 2027-01-01T00:00:00Z exactly, with replacement and migration_url', async () => {
    await accept(g, F, MINIMAL[F]);
    g.t.clock.set('2027-01-01T00:00:00Z');
    const res = await generate(g.t, F, MINIMAL[F]);
    const body = expect410(res);
    expect(body).toEqual({
      error: 'model_unavailable',
      reason: 'deprecated',
      message: expect.any(String),
      sunset_date: '2027-01-01',
      replacement: D_FAST,
      migration_url: 'https://example.com/migrate',
    });
    expect(res.headers).not.toHaveProperty('deprecation');
  });

  it('keeps answering 410 after the sunset, even for an invalid body', async () => {
    g.t.clock.set('2027-03-01T12:00:00Z');
    expect410(await generate(g.t, F, { surprise: 1 }));
  });

  it('still validates the body before the sunset (400, not 410)', async () => {
    errorOf(await generate(g.t, F, { surprise: 1 }), 400);
  });

  it('leaves the other models undeprecated', async () => {
    for (const path of GENERATION_PATHS.filter((p) => p !== F)) {
      const { res } = await accept(g, path, MINIMAL[path]);
      expect(res.headers).not.toHaveProperty('deprecation');
      expect(res.headers).not.toHaveProperty('sunset');
      expect(res.headers).not.toHaveProperty('link');
    }
  });
});

describe('a model deprecated through config, without a migration_url', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen({
      now: '2026-12-31T23:59:59.999Z',
      deprecations: [{ model: F, sunset_date: '2027-01-01', replacement: D_FAST }],
    });
  });
  afterAll(() => g.t.close());

  it('points Link at this server\'s deprecation entry for the model', async () => {
    const { res } = await accept(g, F, MINIMAL[F]);
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.sunset).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
    expect(res.headers.link).toBe('<http://mediagen.test/deprecations#video/vendor-f/model-f>; rel="deprecation"');
  });

  it('names the same fallback entry as migration_url in the 410', async () => {
    g.t.clock.set('2027-01-01T00:00:00Z');
    const body = expect410(await generate(g.t, F, MINIMAL[F]));
    expect(body.replacement).toBe(D_FAST);
    expect(body.migration_url).toBe('http://mediagen.test/deprecations#video/vendor-f/model-f');
  });
});

describe('a model deprecated through config, without a replacement', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen({ now: '2026-12-31T23:59:59.999Z', deprecations: [{ model: F, sunset_date: '2027-01-01' }] });
  });
  afterAll(() => g.t.close());

  it('still sends the Link fallback before the sunset', async () => {
    const { res } = await accept(g, F, MINIMAL[F]);
    expect(res.headers.link).toBe('<http://mediagen.test/deprecations#video/vendor-f/model-f>; rel="deprecation"');
  });

  it('answers 410 without replacement or migration_url after it', async () => {
    g.t.clock.set('2027-01-01T00:00:00Z');
    const body = expect410(await generate(g.t, F, MINIMAL[F]));
    expect(Object.keys(body).sort()).toEqual(['error', 'message', 'reason', 'sunset_date']);
  });
});
