import { createHash } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, errorOf, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { memberToken } from '../helpers/members.js';
import { readableBackend } from '../helpers/side-door.js';

const OWNER = 'owner@localhost';
const ADA = 'ada@example.com';

interface TokenView {
  id: string;
  name: string;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  current: boolean;
}

describe.each(backends)('API tokens over the API: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const post = (url: string, token: string, body?: unknown) =>
    checkedInject(t.app, {
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const list = async (token = t.token) => {
    const res = await get(t, '/tokens', token);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { items: TokenView[] }).items;
  };
  const create = async (name: string, token = t.token) => {
    const res = await post('/tokens', token, { name });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { token: TokenView; secret: string };
  };

  it('creates a token that works at once, shows its secret only in the creation answer, and lists it newest first', async () => {
    t = await createTestApp({ backend });
    t.clock.advance(1000);
    const created = await create('deploy bot');
    expect(created.secret).toMatch(/^mg_[A-Za-z0-9_-]{43}$/);
    expect(created.token).toEqual({
      id: expect.any(String),
      name: 'deploy bot',
      created_by: OWNER,
      created_at: '2026-11-22T12:00:01.000000Z',
      last_used_at: null,
      revoked_at: null,
      current: false,
      limits: null,
      spend: null,
    });
    // The new token authenticates; the list marks the calling token `current`.
    const seen = await list(created.secret);
    expect(seen.map((x) => [x.name, x.current])).toEqual([
      ['deploy bot', true],
      ['default', false],
    ]);
    expect(seen[0]!.last_used_at).toBe('2026-11-22T12:00:01.000000Z');
    // Never a secret or a hash in a list.
    const text = JSON.stringify(await list());
    expect(text).not.toContain(created.secret);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
    expect(Object.keys(seen[0]!).sort()).toEqual(['created_at', 'created_by', 'current', 'id', 'last_used_at', 'limits', 'name', 'revoked_at', 'spend']);
  });

  it('refuses an Idempotency-Key with 400 rather than ignore it, and makes no token', async () => {
    t = await createTestApp({ backend });
    const res = await checkedInject(t.app, {
      method: 'POST',
      url: '/tokens',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', 'idempotency-key': 'k-1' },
      payload: JSON.stringify({ name: 'retried' }),
    });
    expect(errorOf(res, 400)).toBe(
      'POST /tokens takes no Idempotency-Key: its answer cannot be replayed; after a failed try, GET /tokens shows whether the token was made (revoke it if its secret was lost)',
    );
    expect((await list()).map((x) => x.name)).toEqual(['default']);
  });

  it('stores only the SHA-256 of a token made over the API', async () => {
    const side = await readableBackend(backend);
    t = await createTestApp({ backend: side.backend });
    const { token, secret } = await create('stored');
    const rows = await side.rows(`SELECT * FROM api_tokens WHERE id = '${token.id}'`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(JSON.stringify(await side.rows('SELECT * FROM api_tokens'))).not.toContain(secret.slice(3));
  });

  it("creates the token as the calling member's, so it acts with that member's role", async () => {
    t = await createTestApp({ backend });
    const ada = await memberToken(t, ADA, 'admin');
    const made = await create('ada bot', ada);
    expect(made.token.created_by).toBe(ADA);
    expect((await get(t, '/workspace', made.secret)).json()).toMatchObject({ member_email: ADA, role: 'admin' });
    // Ada demoted: every token of hers acts as a member from now on.
    await t.services.identity.addMember('default', ADA, 'member', OWNER);
    expect(errorOf(await get(t, '/tokens', made.secret), 403)).toBe(`only owners and admins can list API tokens; ${ADA} is a member`);
  });

  it('refuses a member with 403 on every token operation, naming the role', async () => {
    t = await createTestApp({ backend });
    const member = await memberToken(t, ADA, 'member');
    const [mine] = (await list()).filter((x) => x.name === 'default');
    expect(errorOf(await get(t, '/tokens', member), 403)).toBe(`only owners and admins can list API tokens; ${ADA} is a member`);
    expect(errorOf(await post('/tokens', member, { name: 'x' }), 403)).toBe(`only owners and admins can create API tokens; ${ADA} is a member`);
    // The role is checked before the body: a member learns nothing from a refusal of the body.
    expect(errorOf(await post('/tokens', member, { nme: 'x' }), 403)).toContain('only owners and admins can create API tokens');
    expect(errorOf(await post(`/tokens/${mine!.id}/revoke`, member), 403)).toBe(`only owners and admins can revoke API tokens; ${ADA} is a member`);
    expect((await list()).find((x) => x.id === mine!.id)!.revoked_at).toBeNull();
  });

  it.each([
    [{}, "missing required property 'name'"],
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: '   ' }, 'token name must be 1 to 200 characters'],
    [{ name: 'x', scopes: ['all'] }, "'scopes'"],
    [{ name: 7 }, 'name'],
    [['x'], 'object'],
  ])('refuses the body %j with 400 naming the field', async (body, message) => {
    t = await createTestApp({ backend });
    expect(errorOf(await post('/tokens', t.token, body), 400)).toContain(message);
    expect(await list()).toHaveLength(1);
  });

  it('revokes a token: 401 on its next request, the same revoked_at when revoked again, 404 for an unknown or foreign id', async () => {
    t = await createTestApp({ backend });
    const bot = await create('bot');
    t.clock.advance(5000);
    const res = await post(`/tokens/${bot.token.id}/revoke`, t.token);
    expect(res.statusCode, res.body).toBe(200);
    const revoked = res.json() as TokenView;
    expect(revoked).toMatchObject({ id: bot.token.id, name: 'bot', revoked_at: '2026-11-22T12:00:05.000000Z', current: false });
    expect(errorOf(await get(t, '/jobs', bot.secret), 401)).toBe('this API token has been revoked');
    t.clock.advance(5000);
    const again = await post(`/tokens/${bot.token.id}/revoke`, t.token);
    expect(again.statusCode).toBe(200);
    expect((again.json() as TokenView).revoked_at).toBe(revoked.revoked_at);
    // Revoked tokens stay listed.
    expect((await list()).find((x) => x.id === bot.token.id)!.revoked_at).toBe(revoked.revoked_at);

    const other = await t.newWorkspace('other');
    const [foreign] = await t.services.identity.listTokens(other.workspaceId);
    expect(errorOf(await post(`/tokens/${foreign!.id}/revoke`, t.token), 404)).toContain(`token '${foreign!.id}' not found`);
    expect(errorOf(await post('/tokens/no-such-token/revoke', t.token), 404)).toContain("token 'no-such-token' not found");
    // An id no token can have is refused without being echoed back.
    const long = errorOf(await post(`/tokens/${'x'.repeat(300)}/revoke`, t.token), 404);
    expect(long).not.toContain('x'.repeat(65));
    expect((await get(t, '/jobs', other.token)).statusCode).toBe(200);
  });

  it('lets a token revoke itself: that answer is its last', async () => {
    t = await createTestApp({ backend });
    const [self] = await list();
    const res = await post(`/tokens/${self!.id}/revoke`, t.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: self!.id, current: true, revoked_at: expect.any(String) });
    expect(errorOf(await get(t, '/workspace'), 401)).toBe('this API token has been revoked');
  });

  it('never writes a token secret to the request log', async () => {
    const lines: Json[] = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => lines.push(JSON.parse(line) as Json) });
    t = await createTestApp({ backend, logger });
    const { secret } = await create('logged?');
    await post('/tokens', t.token, { name: 'x', bad: true });
    expect(lines.length).toBeGreaterThan(0);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(t.token);
  });
});
