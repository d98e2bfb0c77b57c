import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/models/catalog.js';
import { MODELS } from '../../src/models/registry.js';
import { PUBLIC_URL, createTestApp, del, errorOf, generate } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { runNextJob } from '../helpers/ledger.js';
import { A2_MEDIUM, B1, C_EDIT, D_FAST, E1, F, GENERATION_PATHS, MINIMAL } from './generate-support.js';

// ajv-formats is CommonJS; under node16 ESM its callable is the default export's default.
const addFormats = addFormatsImport as unknown as typeof addFormatsImport.default;

/** GET /models and GET /models/{id} (issue 14): the catalog as data, public like /openapi.json. */

type Model = Json & {
  id: string;
  kind: string;
  description: string;
  available: boolean;
  price?: { description: string; rates_micro_usd: Record<string, number> };
  request_schema?: Json;
  deprecation?: { deprecated: true; sunset_date: string; replacement: string | null; migration_url: string };
};

/** Without a token: the catalog is documentation. Each answer is checked against its declared schema. */
const read = (t: TestApp, url: string) => checkedInject(t.app, { method: 'GET', url });
const list = async (t: TestApp) => {
  const res = await read(t, '/models');
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { items: Model[] }).items;
};
const one = async (t: TestApp, url: string) => {
  const res = await read(t, url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Model;
};

/** What a job of `model` with `body` was charged: created, run to completion without an engine, read from the ledger. */
async function charged(t: TestApp, model: string, body: Json): Promise<number> {
  const res = await generate(t, model, body);
  expect(res.statusCode, res.body).toBe(200);
  const { job_id } = res.json() as { job_id: string };
  await runNextJob(t.services.runs, 'completed');
  const charge = (await t.store.billing.listEntries(t.workspaceId)).find((e) => e.jobId === job_id && e.kind === 'charge');
  return charge!.amountMicros;
}

describe('GET /models', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('lists every model of the catalog, in its order, with its id, kind and description, without a token', async () => {
    const items = await list(t);
    expect(items.map((m) => m.id)).toEqual(MODELS.map((m) => m.path));
    for (const [i, m] of MODELS.entries()) {
      expect(items[i], m.path).toMatchObject({ id: m.path, kind: m.kind, description: m.summary });
    }
  });

  it('answers each model at /models/{id}, percent-encoded or with its slashes, as the list shows it', async () => {
    const items = await list(t);
    for (const m of items) {
      expect(await one(t, `/models/${encodeURIComponent(m.id)}`), m.id).toEqual(m);
      expect(await one(t, `/models/${m.id}`), m.id).toEqual(m);
    }
  });

  it.each(['/models/image/vendor-x/model-z', `/models/${encodeURIComponent('image/vendor-x/model-z')}`, '/models/nothing', '/models/image/vendor-a/model-a-2'])(
    '%s is 404 with the error body',
    async (url) => {
      expect(errorOf(await read(t, url), 404)).toMatch(/^model '.+' not found/);
    },
  );

  it('refuses query parameters it does not take', async () => {
    expect(errorOf(await read(t, '/models?kind=image'), 400)).toMatch(/unknown query parameter 'kind'/);
    expect(errorOf(await read(t, `/models/${F}?x=1`), 400)).toMatch(/unknown query parameter 'x'/);
  });

  it('lists as request_schema exactly the JSON Schema each endpoint validates with, standalone (draft-07)', async () => {
    const catalog = buildCatalog({});
    for (const m of await list(t)) {
      const entry = catalog.get(m.id)!;
      if (!entry.request) {
        expect(m, m.id).not.toHaveProperty('request_schema');
        continue;
      }
      const { $schema, ...schema } = m.request_schema!;
      expect($schema).toBe('http://json-schema.org/draft-07/schema#');
      expect(schema, m.id).toEqual(JSON.parse(JSON.stringify(entry.request)));
      expect(JSON.stringify(schema)).not.toContain('$ref');
    }
  });

  /** Bodies each endpoint must judge as its listed schema does. */
  const BODIES: [string, Json][] = GENERATION_PATHS.flatMap((path): [string, Json][] => [
    [path, MINIMAL[path]!],
    [path, {}],
    [path, { ...MINIMAL[path], unknown_field: 1 }],
    [path, { ...MINIMAL[path], prompt: 5 }],
  ]);
  BODIES.push(
    [A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], aspect_ratio: '5:7' }],
    [A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], intensity: 101 }],
    [A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], image_style_references: [{ url: 'https://example.com/s.png', strength: 0.2 }] }],
    [A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], image_url: 'ftp://example.com/a.png' }],
    [B1, { ...MINIMAL[B1], mode: 'max', style_images: [] }],
    [B1, { ...MINIMAL[B1], mode: 'ultra' }],
    [C_EDIT, { prompt: 'x' }],
    [D_FAST, { ...MINIMAL[D_FAST], duration: 4, generate_audio: true }],
    [D_FAST, { ...MINIMAL[D_FAST], generate_audio: 'yes' }],
    [E1, { ...MINIMAL[E1], duration: 7 }],
    [E1, { ...MINIMAL[E1], mode: 'pro', duration: 10 }],
    [F, { ...MINIMAL[F], start_image: 'not a url' }],
  );

  it('a body the listed schema accepts is accepted by POST /generate/{id}, and one it refuses is refused with 400', async () => {
    const schemas = new Map((await list(t)).map((m) => [m.id, m.request_schema]));
    const ajv = new Ajv({ strictTypes: false });
    addFormats(ajv);
    let accepted = 0;
    for (const [path, body] of BODIES) {
      const valid = ajv.validate(schemas.get(path)!, structuredClone(body));
      const res = await generate(t, path, body);
      expect(res.statusCode, `${path} ${JSON.stringify(body)}: schema says ${valid}; ${res.body}`).toBe(valid ? 200 : 400);
      if (valid) {
        accepted++;
        await del(t, `/jobs/${(res.json() as { job_id: string }).job_id}`);
      }
    }
    // Both sides of the equivalence are exercised.
    expect(accepted).toBeGreaterThan(GENERATION_PATHS.length);
    expect(BODIES.length - accepted).toBeGreaterThan(2 * GENERATION_PATHS.length);
  });

  it('shows each priced model its rule in words and its default rates in micro-USD, and retired models no price', async () => {
    for (const m of await list(t)) {
      const rule = MODELS.find((x) => x.path === m.id)!.price;
      if (!rule) {
        expect(m, m.id).not.toHaveProperty('price');
        continue;
      }
      expect(m.price, m.id).toEqual({ description: rule.unit, rates_micro_usd: rule.rates });
    }
    expect((await one(t, `/models/${F}`)).price!.rates_micro_usd).toEqual({ per_request: 451_500 });
  });

  it('lists the rates a job is charged at by default', async () => {
    const rates = (id: string) => list(t).then((items) => items.find((m) => m.id === id)!.price!.rates_micro_usd);
    const a2 = await rates(A2_MEDIUM);
    expect(await charged(t, A2_MEDIUM, MINIMAL[A2_MEDIUM]!)).toBe(a2.text_to_image);
    expect(await charged(t, A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], moodboards: [{ id: '3f2a9c4e-8b1d-4e7a-9c6f-1a2b3c4d5e6f' }] })).toBe(a2.moodboards);
    const d = await rates(D_FAST);
    expect(await charged(t, D_FAST, { ...MINIMAL[D_FAST], duration: 4, generate_audio: true })).toBe(4 * d.per_second_with_audio!);
    expect(await charged(t, F, MINIMAL[F]!)).toBe((await rates(F)).per_request);
  });
});

describe('GET /models with the config file\'s prices', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ prices: { [F]: { per_request: 123_456 }, [D_FAST]: { per_second_with_audio: 200_001 } } });
  });
  afterAll(() => t.close());

  it('lists the rates in force, overridden and not, and a job is charged at them', async () => {
    const items = await list(t);
    const rates = (id: string) => items.find((m) => m.id === id)!.price!.rates_micro_usd;
    expect(rates(F)).toEqual({ per_request: 123_456 });
    expect(rates(D_FAST)).toEqual({ per_second: 105_000, per_second_with_audio: 200_001 });
    expect(await charged(t, F, MINIMAL[F]!)).toBe(123_456);
    expect(await charged(t, D_FAST, { ...MINIMAL[D_FAST], duration: 6, generate_audio: true })).toBe(6 * 200_001);
    expect(await charged(t, D_FAST, { ...MINIMAL[D_FAST], duration: 6 })).toBe(6 * 105_000);
  });
});

describe('GET /models: deprecations and availability', () => {
  const BEFORE = '2026-12-31T23:59:59.999Z';
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ now: BEFORE, deprecations: [{ model: F, sunset_date: '2027-01-01', replacement: D_FAST }] });
  });
  afterAll(() => t.close());
  afterEach(() => t.clock.set(BEFORE));

  const DEPRECATION = { deprecated: true, sunset_date: '2027-01-01', replacement: D_FAST, migration_url: `${PUBLIC_URL}/deprecations#${F}` };

  it('shows a deprecated model before its sunset as available, with its deprecation, and it takes requests', async () => {
    const m = await one(t, `/models/${F}`);
    expect(m).toMatchObject({ id: F, available: true, deprecation: DEPRECATION });
    expect(m.request_schema).toBeDefined();
    expect((await generate(t, F, MINIMAL[F])).statusCode).toBe(200);
  });

  it('shows it unavailable from the first instant of its sunset date, still listed with its deprecation and schema', async () => {
    t.clock.set('2027-01-01T00:00:00Z');
    const m = (await list(t)).find((x) => x.id === F)!;
    expect(m).toMatchObject({ id: F, available: false, deprecation: DEPRECATION });
    expect(m.request_schema).toBeDefined();
    expect(await one(t, `/models/${encodeURIComponent(F)}`)).toEqual(m);
    expect((await generate(t, F, MINIMAL[F])).statusCode).toBe(410);
  });

  it('lists retired models unavailable, with their deprecation and neither price nor request schema', async () => {
    const items = await list(t);
    const retired = items.filter((m) => !MODELS.find((x) => x.path === m.id)!.request);
    expect(retired.map((m) => m.id)).toEqual(['image/vendor-g/model-g-3', 'video/vendor-g/model-h-1.0-lite', 'video/vendor-i/model-i-2']);
    for (const m of retired) {
      expect(Object.keys(m).sort(), m.id).toEqual(['available', 'deprecation', 'description', 'id', 'kind']);
      expect(m.available).toBe(false);
      expect(m.deprecation!.migration_url).toBe(`${PUBLIC_URL}/deprecations#${m.id}`);
    }
    expect(retired[0]!.deprecation).toEqual({
      deprecated: true,
      sunset_date: '2026-05-13',
      replacement: 'image/vendor-g/model-g-5-lite',
      migration_url: `${PUBLIC_URL}/deprecations#image/vendor-g/model-g-3`,
    });
    expect(retired[2]!.deprecation!.replacement).toBeNull();
  });

  it('shows no deprecation on a model without one, and GET /deprecations shows the same deprecations as the catalog', async () => {
    const items = await list(t);
    expect(items.find((m) => m.id === D_FAST)).not.toHaveProperty('deprecation');
    const deprecations = (await read(t, '/deprecations')).json() as { items: Json[] };
    expect(deprecations.items).toEqual(items.filter((m) => m.deprecation).map((m) => ({ model: m.id, ...m.deprecation })));
  });
});

describe('GET /models in the OpenAPI document', () => {
  let t: TestApp;
  let doc: { paths: Record<string, Record<string, Json & { parameters?: Json[]; responses: Record<string, Json> }>>; components: { schemas: Record<string, Json> } };
  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  afterAll(() => t.close());

  const schemaOf = (path: string, status: string) => (doc.paths[path]!.get!.responses[status]!.content as Record<string, { schema: Json }>)['application/json']!.schema;

  it('documents GET /models and GET /models/{id}, public, with the Model components, and not the slash form', () => {
    // The quote (POST /models/{id}/quote) has its own path; no slash form is documented.
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/models'))).toEqual(['/models', '/models/{id}', '/models/{id}/quote']);
    expect(doc.paths['/models']!.get!.security).toEqual([]);
    expect(doc.paths['/models/{id}']!.get!.security).toEqual([]);
    expect(schemaOf('/models', '200')).toEqual({ $ref: '#/components/schemas/ModelList' });
    expect(schemaOf('/models/{id}', '200')).toEqual({ $ref: '#/components/schemas/Model' });
    expect(schemaOf('/models/{id}', '404')).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.paths['/models/{id}']!.get!.parameters!.map((p) => p.name)).toEqual(['id']);
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Model', 'ModelList', 'ModelPrice', 'ModelDeprecation', 'DeprecationList']));
  });
});
