import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerAuth, requireAuth } from '../../src/http/plugins/auth.js';
import { registerErrorHandling } from '../../src/http/plugins/error-handler.js';
import { registerWorkerAuth, requireWorker } from '../../src/http/plugins/remote-auth.js';
import { DomainError } from '../../src/domain/error-catalogue.js';
import { createTestApp, errorOf, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { readableBackend } from '../helpers/side-door.js';

const SECRET_RE = /^mgw_[A-Za-z0-9_-]{43}$/;

let t: TestApp | undefined;
let bare: FastifyInstance | undefined;
afterEach(async () => {
  await bare?.close();
  await t?.close();
  bare = undefined;
  t = undefined;
});

/** A bare Fastify with both auth plugins, a worker route and an API route, over the test app's services. */
async function bareApp(app: TestApp): Promise<FastifyInstance> {
  const f = Fastify({ logger: false });
  registerErrorHandling(f);
  registerAuth(f, app.services.identity);
  registerWorkerAuth(f, app.services.workerTokens);
  f.get('/w', { config: { worker: true } }, async (request) => {
    const w = requireWorker(request.worker);
    return { token_id: w.tokenId, name: w.name, models: w.models, auth: request.auth };
  });
  f.get('/api', async (request) => ({ workspace_id: requireAuth(request.auth).workspace.id, worker: request.worker }));
  await f.ready();
  return f;
}

/** A list of values sends the header that many times (light-my-request takes it, its types do not). */
const call = (f: FastifyInstance, url: string, authorization?: string | string[]): Promise<LightMyRequestResponse> =>
  f.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization: authorization as string } });

describe.each(backends)('worker tokens and their authentication on $name', (backend) => {
  it('create shows an mgw_ secret once and stores only its SHA-256; list never shows it', async () => {
    const side = await readableBackend(backend);
    t = await createTestApp({ backend: side.backend });
    const { token, record } = await t.services.workerTokens.create('  gpu box 1 ', ['video/*', 'image/vendor-b/model-b-1', 'video/*']);
    expect(token).toMatch(SECRET_RE);
    expect(record).toMatchObject({ name: 'gpu box 1', models: ['video/*', 'image/vendor-b/model-b-1'], lastUsedAt: null, revokedAt: null });
    const rows = await side.rows('SELECT * FROM worker_tokens');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(token.slice(4));
    expect(JSON.stringify(await t.services.workerTokens.list())).not.toContain(token.slice(4));
    // The list is in creation order; the clock only moves when told.
    t.clock.advance(1);
    const second = await t.services.workerTokens.create('all models');
    expect(second.token).not.toBe(token);
    expect((await t.services.workerTokens.list()).map((r) => [r.name, r.models])).toEqual([
      ['gpu box 1', ['video/*', 'image/vendor-b/model-b-1']],
      ['all models', []],
    ]);
  });

  it('create refuses a bad name or pattern; revoke of an unknown token is not found', async () => {
    t = await createTestApp({ backend });
    const s = t.services.workerTokens;
    await expect(s.create('   ')).rejects.toThrow(/worker token name must be 1 to 200 characters/);
    await expect(s.create('x'.repeat(201))).rejects.toThrow(DomainError);
    await expect(s.create('gpu', ['video/[ab]'])).rejects.toThrow(/'video\/\[ab\]' is not a model pattern/);
    await expect(s.create('gpu', [''])).rejects.toThrow(/is not a model pattern/);
    await expect(s.revoke('3f1d2c4b-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'not_found' });
    expect(await s.list()).toEqual([]);
  });

  it('a worker route takes a worker token: the principal, and its use recorded', async () => {
    t = await createTestApp({ backend });
    bare = await bareApp(t);
    const { token, record } = await t.services.workerTokens.create('gpu', ['video/*']);
    const res = await call(bare, '/w', `Bearer ${token}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ token_id: record.id, name: 'gpu', models: ['video/*'], auth: null });
    expect((await t.store.workerTokens.get(record.id))!.lastUsedAt).toBe(t.clock.nowMs() * 1000);
  });

  it('a worker route refuses with 401: no header, two headers, a malformed one, an unknown token, an API token, a revoked token', async () => {
    t = await createTestApp({ backend });
    bare = await bareApp(t);
    const { token, record } = await t.services.workerTokens.create('gpu');
    expect(errorOf(await call(bare, '/w'), 401)).toBe('missing Authorization header; send Authorization: Bearer <WORKER_TOKEN>');
    expect(errorOf(await call(bare, '/w', [`Bearer ${token}`, `Bearer ${token}`]), 401)).toBe('more than one Authorization header; send exactly one');
    expect(errorOf(await call(bare, '/w', `Basic ${token}`), 401)).toBe('malformed Authorization header; expected Bearer <WORKER_TOKEN>');
    expect(errorOf(await call(bare, '/w', 'Bearer mgw_nothing'), 401)).toBe('invalid worker token');
    const apiToken = errorOf(await call(bare, '/w', `Bearer ${t.token}`), 401);
    expect(apiToken).toBe('an API token cannot use the worker protocol; send a worker token (mgw_...)');
    expect(apiToken).not.toContain(t.token);

    await t.services.workerTokens.revoke(record.id);
    expect(errorOf(await call(bare, '/w', `Bearer ${token}`), 401)).toBe('this worker token has been revoked');
    // Revoking again keeps the first time.
    const again = await t.services.workerTokens.revoke(record.id);
    expect(again.revokedAt).toBe((await t.store.workerTokens.get(record.id))!.revokedAt);
  });

  it('the API refuses a worker token with 401, and its own routes never look at worker tokens', async () => {
    t = await createTestApp({ backend });
    bare = await bareApp(t);
    const { token } = await t.services.workerTokens.create('gpu');
    expect(errorOf(await call(bare, '/api', `Bearer ${token}`), 401)).toBe('invalid API token');
    const ok = await call(bare, '/api', `Bearer ${t.token}`);
    expect(ok.json()).toEqual({ workspace_id: t.workspaceId, worker: null });
    // The real API: a worker token is simply unknown there.
    expect(errorOf(await get(t, '/jobs', token), 401)).toBe('invalid API token');
    expect(errorOf(await get(t, '/styles', token), 401)).toBe('invalid API token');
  });

  it('byId gives the principal of a token that is not revoked', async () => {
    t = await createTestApp({ backend });
    const { token, record } = await t.services.workerTokens.create('gpu', ['audio/*']);
    const principal = await t.services.workerTokens.byId(record.id);
    expect(principal).toEqual({ tokenId: record.id, name: 'gpu', models: ['audio/*'], tokenHash: createHash('sha256').update(token).digest('hex') });
    expect(await t.services.workerTokens.authenticate([`Bearer ${token}`])).toEqual(principal);
    expect(await t.services.workerTokens.byId('3f1d2c4b-0000-4000-8000-000000000000')).toBeUndefined();
    await t.services.workerTokens.revoke(record.id);
    expect(await t.services.workerTokens.byId(record.id)).toBeUndefined();
  });
});
