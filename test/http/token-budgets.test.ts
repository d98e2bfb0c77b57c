import { Ajv } from 'ajv';
import { afterEach, describe, expect, it } from 'vitest';
import { createJob, createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { expectLedgerConsistent, runNextJob } from '../helpers/ledger.js';
import { IMAGE_THEN_VIDEO, execute, publishGraph } from '../helpers/node-apps.js';

const B1 = 'image/vendor-b/model-b-1';
const B1_PRICE = 40_400;
const A2 = 'image/vendor-a/model-a-2/medium';
const A2_BODY = { prompt: 'p', aspect_ratio: '1:1', resolution: '1K' };

interface TokenView {
  id: string;
  name: string;
  limits: { spend_limit_usd: string | null; spend_period: string | null; models: string[] | null; max_concurrent_jobs: number | null } | null;
  spend: { period_start: string; spent_usd: string; jobs_in_flight: number } | null;
}

describe.each(backends)('API token budgets: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const newToken = async (body: Json) => {
    const res = await checkedInject(t.app, {
      method: 'POST',
      url: '/tokens',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'app', ...body }),
    });
    return res;
  };
  const limited = async (body: Json) => {
    const res = await newToken(body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { token: TokenView; secret: string };
  };
  const fox = (token: string) => generate(t, B1, { prompt: 'a red fox' }, {}, token);
  const tokenView = async (id: string) => ((await get(t, '/tokens')).json() as { items: TokenView[] }).items.find((x) => x.id === id)!;

  it('refuses a create past the spend limit with 402 token_budget_exceeded, and a failed job gives its spend back', async () => {
    t = await createTestApp({ backend });
    const { token, secret } = await limited({ spend_limit_usd: '0.1' });
    expect(token.limits).toEqual({ spend_limit_usd: '0.100000', spend_period: 'total', models: null, max_concurrent_jobs: null });
    for (let i = 0; i < 2; i++) expect((await fox(secret)).statusCode).toBe(200);
    const refused = await fox(secret);
    expect(errorOf(refused, 402)).toBe(
      "this API token's spend limit is $0.100000 in all: $0.080800 is charged or held in all and this request costs $0.040400",
    );
    expect(refused.json()).toMatchObject({ code: 'token_budget_exceeded' });
    // The workspace's own token is not bound by it.
    expect((await fox(t.token)).statusCode).toBe(200);
    expect((await tokenView(token.id)).spend).toEqual({ period_start: '1970-01-01T00:00:00.000000Z', spent_usd: '0.080800', jobs_in_flight: 2 });
    // Jobs run in creation order: the token's first completes (its spend stays), its second fails (given back).
    await runNextJob(t.services.runs, 'completed');
    await runNextJob(t.services.runs, 'failed');
    expect((await tokenView(token.id)).spend).toEqual({ period_start: '1970-01-01T00:00:00.000000Z', spent_usd: '0.040400', jobs_in_flight: 0 });
    expect((await fox(secret)).statusCode).toBe(200);
    expect(errorOf(await fox(secret), 402)).toMatch(/\$0\.080800 is charged or held/);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('starts a day budget again at UTC midnight and a month budget on the first of the month', async () => {
    t = await createTestApp({ backend, now: '2026-11-30T23:00:00Z' });
    const day = await limited({ spend_limit_usd: '0.05', spend_period: 'day' });
    const month = await limited({ spend_limit_usd: '0.05', spend_period: 'month' });
    for (const { secret } of [day, month]) {
      expect((await fox(secret)).statusCode).toBe(200);
      expect(errorOf(await fox(secret), 402)).toMatch(/spend limit is \$0\.050000 a (day|month): \$0\.040400 is charged or held (today|this month) \(UTC\)/);
    }
    t.clock.advance(2 * 3600_000); // 2026-12-01T01:00Z: a new day and a new month
    expect((await tokenView(day.token.id)).spend).toEqual({ period_start: '2026-12-01T00:00:00.000000Z', spent_usd: '0.000000', jobs_in_flight: 1 });
    expect((await fox(day.secret)).statusCode).toBe(200);
    expect((await fox(month.secret)).statusCode).toBe(200);
    t.clock.advance(86_400_000); // the next day, the same month
    expect((await fox(day.secret)).statusCode).toBe(200);
    expect(errorOf(await fox(month.secret), 402)).toMatch(/this month/);
  });

  it('refuses a model outside the token patterns with 403 model_not_allowed and creates nothing', async () => {
    t = await createTestApp({ backend });
    const { secret } = await limited({ models: ['image/vendor-a/*'] });
    const res = await fox(secret);
    expect(errorOf(res, 403)).toBe("this API token may create jobs of 'image/vendor-a/*' only, not of 'image/vendor-b/model-b-1'");
    expect(res.json()).toMatchObject({ code: 'model_not_allowed' });
    expect((await generate(t, A2, A2_BODY, {}, secret)).statusCode).toBe(200);
    expect(((await get(t, '/jobs')).json() as { items: unknown[] }).items).toHaveLength(1);
  });

  it('answers model_not_allowed on every create with the 403 body the OpenAPI document declares there, each field of it documented', async () => {
    t = await createTestApp({ backend });
    const { secret } = await limited({ models: ['video/*'] });
    const { versionId, slug } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, { post: { responses: Record<string, { content: { 'application/json': { schema: { $ref: string } } } }> } }>;
      components: { schemas: Record<string, Json> };
    }>();
    const refusals: [string, Promise<{ statusCode: number; json: () => unknown }>, string][] = [
      [`/generate/${B1}`, fox(secret), B1],
      ['/styles/train', createJob(t, 'loraTraining', { name: 'w', urls: ['https://assets.example/a.png'] }, {}, secret), 'loraTraining'],
      ['/node-apps/{id}/execute', execute(t, versionId, { prompt: 'a lighthouse' }, {}, secret), `node-app/${slug}`],
    ];
    for (const [path, answer, model] of refusals) {
      const res = await answer;
      expect(res.statusCode, path).toBe(403);
      expect(res.json(), path).toEqual({ error: `this API token may create jobs of 'video/*' only, not of '${model}'`, code: 'model_not_allowed' });
      const { $ref } = doc.paths[path]!.post.responses['403']!.content['application/json'].schema;
      const { $id: _id, ...declared } = doc.components.schemas[$ref.replace('#/components/schemas/', '')]!;
      const check = new Ajv({ strict: false }).compile({ ...declared, additionalProperties: false });
      expect(check(res.json()), `${path}: ${JSON.stringify(check.errors)}`).toBe(true);
    }
    expect(((await get(t, '/jobs')).json() as { items: unknown[] }).items).toEqual([]);
  });

  it('answers 429 with Retry-After past the token concurrency, and admits again when one of its jobs ends', async () => {
    t = await createTestApp({ backend });
    const { token, secret } = await limited({ max_concurrent_jobs: 2 });
    for (let i = 0; i < 2; i++) expect((await fox(secret)).statusCode).toBe(200);
    const refused = await fox(secret);
    expect(errorOf(refused, 429)).toBe('too many jobs: this API token may have 2 jobs in flight and has 2; retry when one ends');
    expect(refused.headers['retry-after']).toBe('5');
    expect((await tokenView(token.id)).spend).toMatchObject({ jobs_in_flight: 2, spent_usd: '0.080800' });
    await runNextJob(t.services.runs, 'failed');
    expect((await fox(secret)).statusCode).toBe(200);
  });

  it('admits exactly what the spend limit covers out of 20 concurrent creates', async () => {
    t = await createTestApp({ backend });
    const { token, secret } = await limited({ spend_limit_usd: String((5 * B1_PRICE) / 1e6) });
    const answers = await Promise.all(Array.from({ length: 20 }, () => fox(secret)));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(5);
    expect(answers.filter((r) => r.statusCode === 402)).toHaveLength(15);
    expect((await tokenView(token.id)).spend).toMatchObject({ spent_usd: '0.202000', jobs_in_flight: 5 });
  });

  it('refuses malformed limits with 400 naming the field, and makes no token', async () => {
    t = await createTestApp({ backend });
    const cases: [Json, RegExp][] = [
      [{ spend_period: 'day' }, /'spend_period' needs 'spend_limit_usd'/],
      [{ spend_limit_usd: '1.1234567' }, /spend_limit_usd/],
      [{ spend_limit_usd: 5 }, /spend_limit_usd/],
      [{ spend_limit_usd: '5', spend_period: 'week' }, /spend_period/],
      [{ models: ['image/(a|b)'] }, /'models': 'image\/\(a\|b\)' is not a model pattern/],
      [{ models: [] }, /models/],
      [{ max_concurrent_jobs: 0 }, /max_concurrent_jobs/],
    ];
    for (const [body, message] of cases) expect(errorOf(await newToken(body), 400), JSON.stringify(body)).toMatch(message);
    expect(((await get(t, '/tokens')).json() as { items: unknown[] }).items).toHaveLength(1);
  });
});
