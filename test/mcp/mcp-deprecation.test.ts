import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, generate } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { D_FAST, F, MINIMAL } from '../http/generate-support.js';
import { call, callError, connect, listen } from './mcp-client.js';

/**
 * Spec 9: "in the tool-protocol model listing, a `deprecation` object". The listing shows it for
 * each deprecated model on both sides of its sunset (the injected clock moves across it), and
 * generate answers a model past its sunset with the 410's message and fields.
 */

type Listed = { id: string; available: boolean; deprecation?: Json };

const SPEC_DEPRECATED = [
  { id: 'image/vendor-g/model-g-3', sunset_date: '2026-05-13', replacement: 'image/vendor-g/model-g-5-lite' },
  { id: 'video/vendor-g/model-h-1.0-lite', sunset_date: '2026-04-27', replacement: 'video/vendor-g/model-h-1.0-pro-fast' },
  { id: 'video/vendor-i/model-i-2', sunset_date: '2026-04-27', replacement: null },
];

const CONFIG_DEPRECATION = { model: F, sunset_date: '2027-01-01', replacement: D_FAST, migration_url: 'https://example.com/migrate' };

let t: TestApp;
let client: Client;

beforeAll(async () => {
  t = await createTestApp({ now: '2026-04-01T00:00:00Z', deprecations: [CONFIG_DEPRECATION] });
  client = await connect(await listen(t), t.token);
});
afterAll(async () => {
  await client.close();
  await t.close();
});

const listed = async (id: string): Promise<Listed> => (await call<{ items: Listed[] }>(client, 'list_models')).items.find((m) => m.id === id)!;

describe("the spec's deprecated models", () => {
  it.each(['2026-04-01T00:00:00Z', '2026-04-26T23:59:59.999Z', '2026-04-27T00:00:00Z', '2026-05-13T00:00:00Z', '2026-11-22T12:00:00Z'])(
    'at %s each is listed with its deprecation object, unavailable (retired models have no engine here)',
    async (now) => {
      t.clock.set(now);
      for (const m of SPEC_DEPRECATED) {
        expect(await listed(m.id)).toEqual({
          id: m.id,
          kind: expect.any(String),
          description: expect.any(String),
          available: false,
          deprecation: { deprecated: true, sunset_date: m.sunset_date, replacement: m.replacement, migration_url: `http://mediagen.test/deprecations#${m.id}` },
        });
      }
    },
  );

  it.each(SPEC_DEPRECATED)('generate on $id is a tool error with the 410 body of POST /generate', async (m) => {
    t.clock.set('2026-11-22T12:00:00Z');
    const http = await generate(t, m.id, { prompt: 'x' });
    expect(http.statusCode).toBe(410);
    const { error, ...fields } = http.json<Json>();
    expect(await callError(client, 'generate', { model: m.id, input: { prompt: 'x' } })).toEqual({ message: error, details: { code: 'model_unavailable', ...fields } });
    expect(fields).toMatchObject({ reason: 'deprecated', sunset_date: m.sunset_date, ...(m.replacement ? { replacement: m.replacement } : {}) });
  });

  it('get_model_schema shows a retired model with no schema and its deprecation', async () => {
    const got = await call(client, 'get_model_schema', { model: SPEC_DEPRECATED[0]!.id });
    expect(got).toMatchObject({ id: SPEC_DEPRECATED[0]!.id, available: false, request_schema: null, deprecation: { deprecated: true } });
  });
});

describe('a model deprecated through the config, across its sunset', () => {
  const deprecation = { deprecated: true, sunset_date: '2027-01-01', replacement: D_FAST, migration_url: 'https://example.com/migrate' };

  it('is listed available with its deprecation before the sunset, and generate takes requests', async () => {
    t.clock.set('2026-12-31T23:59:59.999Z');
    expect(await listed(F)).toMatchObject({ available: true, deprecation });
    expect(await call(client, 'generate', { model: F, input: MINIMAL[F] })).toMatchObject({ type: F, status: 'queued' });
  });

  it('is listed unavailable from the first instant of the sunset date, and generate answers the 410', async () => {
    t.clock.set('2027-01-01T00:00:00Z');
    expect(await listed(F)).toMatchObject({ available: false, deprecation });
    const { error, ...fields } = (await generate(t, F, MINIMAL[F])).json<Json>();
    const refused = await callError(client, 'generate', { model: F, input: MINIMAL[F] });
    expect(refused).toEqual({ message: error, details: { code: 'model_unavailable', ...fields } });
    expect(refused.details).toMatchObject({ replacement: D_FAST, migration_url: 'https://example.com/migrate' });
  });

  it('lists the models without a deprecation with none', async () => {
    const { items } = await call<{ items: Listed[] }>(client, 'list_models');
    const deprecated = items.filter((m) => m.deprecation).map((m) => m.id);
    expect(deprecated.sort()).toEqual([...SPEC_DEPRECATED.map((m) => m.id), F].sort());
  });
});
