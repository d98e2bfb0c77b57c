import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';

const BODY = { prompt: 'a red fox', aspect_ratio: '1:1', resolution: '1K' };
const MODEL = 'image/vendor-a/model-a-2/medium';

describe.each(backends)('bearer authentication on $name', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend });
  });
  afterAll(() => t.close());

  const routes = [
    ['GET', '/jobs'],
    ['GET', '/jobs/00000000-0000-4000-8000-000000000000'],
    ['DELETE', '/jobs/00000000-0000-4000-8000-000000000000'],
    ['POST', `/generate/${MODEL}`],
  ] as const;

  it.each(routes)('%s %s without Authorization is 401 with a JSON error', async (method, url) => {
    const res = await t.app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: method === 'POST' ? '{}' : undefined });
    expect(errorOf(res, 401)).toMatch(/Authorization/);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="mediagen"');
  });

  it.each([
    ['a scheme other than Bearer', (tok: string) => `Basic ${tok}`],
    ['Bearer with no token', () => 'Bearer'],
    ['Bearer with an empty token', () => 'Bearer '],
    ['a token with spaces inside', (tok: string) => `Bearer ${tok} extra`],
  ])('a malformed header (%s) is 401', async (_name, header) => {
    const res = await t.app.inject({ method: 'GET', url: '/jobs', headers: { authorization: header(t.token) } });
    errorOf(res, 401);
  });

  it('two Authorization headers are 401, even when one of them is valid', async () => {
    const other = await t.newWorkspace('two-headers');
    const res = await t.app.inject({
      method: 'GET',
      url: '/jobs',
      headers: { authorization: [`Bearer ${other.token}`, `Bearer ${t.token}`] as unknown as string },
    });
    expect(errorOf(res, 401)).toMatch(/more than one Authorization/);
  });

  it('an unknown token is 401', async () => {
    errorOf(await get(t, '/jobs', 'mg_notarealtokenatall'), 401);
  });

  it('the scheme name is case-insensitive', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/jobs', headers: { authorization: `bearer ${t.token}` } });
    expect(res.statusCode).toBe(200);
  });

  it('a revoked token is 401 and says it was revoked', async () => {
    const secretRes = await t.services.identity.createToken('default', 'to revoke', 'owner@localhost');
    expect((await get(t, '/jobs', secretRes.secret)).statusCode).toBe(200);
    await t.services.identity.revokeToken('default', secretRes.token.id, 'owner@localhost');
    expect(errorOf(await get(t, '/jobs', secretRes.secret), 401)).toMatch(/revoked/);
  });

  it('a workspace with API access off answers 403 saying so, and 200 again once it is on', async () => {
    const other = await t.newWorkspace('access-toggle');
    await t.services.identity.setWorkspace(other.workspaceId, { apiAccess: false });
    expect(errorOf(await get(t, '/jobs', other.token), 403)).toMatch(/API access is disabled/);
    expect(errorOf(await generate(t, MODEL, BODY, {}, other.token), 403)).toMatch(/API access is disabled/);
    await t.services.identity.setWorkspace(other.workspaceId, { apiAccess: true });
    expect((await get(t, '/jobs', other.token)).statusCode).toBe(200);
  });

  it('authentication comes before body parsing: a bad body without a token is 401', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/generate/${MODEL}`,
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    errorOf(res, 401);
  });

  it('a used token records its last-used time', async () => {
    const { token, secret } = await t.services.identity.createToken('default', 'usage', 'owner@localhost');
    expect(token.lastUsedAt).toBeNull();
    await get(t, '/jobs', secret);
    const [listed] = (await t.services.identity.listTokens('default')).filter((x) => x.id === token.id);
    expect(listed!.lastUsedAt).toBe(t.clock.nowMs() * 1000);
  });

  it('the OpenAPI document and the deprecation list need no token', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/deprecations' })).statusCode).toBe(200);
  });
});

describe.each(backends)('workspace isolation on $name', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend });
  });
  afterAll(() => t.close());

  it("one workspace's tokens never see, fetch or delete another workspace's jobs", async () => {
    const other = await t.newWorkspace('other');
    const mine = (await generate(t, MODEL, BODY)).json().job_id as string;
    const theirs = (await generate(t, MODEL, BODY, {}, other.token)).json().job_id as string;

    const myList = (await get(t, '/jobs')).json().items.map((j: { job_id: string }) => j.job_id);
    expect(myList).toContain(mine);
    expect(myList).not.toContain(theirs);

    expect(errorOf(await get(t, `/jobs/${theirs}`), 404)).toMatch(/not found/);
    errorOf(await t.app.inject({ method: 'DELETE', url: `/jobs/${theirs}`, headers: { authorization: `Bearer ${t.token}` } }), 404);
    expect((await get(t, `/jobs/${theirs}`, other.token)).statusCode).toBe(200);
  });

  it('every token of a workspace sees the same jobs (one API user per workspace)', async () => {
    const second = await t.services.identity.createToken('default', 'second', 'owner@localhost');
    const id = (await generate(t, MODEL, BODY)).json().job_id as string;
    expect((await get(t, `/jobs/${id}`, second.secret)).statusCode).toBe(200);
  });
});
