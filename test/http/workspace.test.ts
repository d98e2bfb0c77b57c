import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { hashToken, newId, newToken } from '../../src/lib/ids.js';
import { createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { memberToken } from '../helpers/members.js';

const OWNER = 'owner@localhost';
const ADA = 'ada@example.com';
const B1 = 'image/vendor-b/model-b-1';

interface SecretView {
  workspace_id: string;
  secret: string;
  previous_secret_valid_until: string | null;
}

describe.each(backends)('GET /workspace and the webhook secret: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const post = (url: string, token = t.token) => checkedInject(t.app, { method: 'POST', url, headers: { authorization: `Bearer ${token}` } });

  it("shows the caller's workspace, member, role, token, balance with what is held and available, and limits", async () => {
    t = await createTestApp({ backend, balanceMicros: 10_000_000, limits: { maxConcurrentJobs: 3, maxBackloggedJobs: 7 } });
    const created = await generate(t, B1, { prompt: 'held' });
    expect(created.statusCode, created.body).toBe(200);
    const [token] = await t.services.identity.listTokens('default');
    const res = await get(t, '/workspace');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      id: t.workspaceId,
      name: 'default',
      role: 'owner',
      member_email: OWNER,
      token: { id: token!.id, name: 'default' },
      balance_usd: '10.000000',
      held_usd: '0.040400',
      available_usd: '9.959600',
      limits: { max_concurrent_jobs: 3, max_backlogged_jobs: 7 },
    });
  });

  it("answers any role, with the member's current role, and null for a token whose member is gone", async () => {
    t = await createTestApp({ backend });
    const member = await memberToken(t, ADA, 'member');
    expect((await get(t, '/workspace', member)).json()).toMatchObject({ member_email: ADA, role: 'member', token: { name: ADA } });
    // A token whose creator is not a member (any more): it still authenticates, with no role.
    const orphan = newToken();
    await t.store.identity.insertToken({ id: newId(), workspaceId: t.workspaceId, name: 'orphan', tokenHash: hashToken(orphan), createdBy: 'gone@example.com', now: 0 });
    expect((await get(t, '/workspace', orphan)).json()).toMatchObject({ member_email: 'gone@example.com', role: null });
    expect(errorOf(await get(t, '/workspace/webhook-secret', orphan), 403)).toBe(
      "only owners and admins can see the webhook secret; gone@example.com is not a member of workspace 'default'",
    );
  });

  it('shows the webhook secret to owners and admins, the one webhooks are signed with', async () => {
    t = await createTestApp({ backend });
    const admin = await memberToken(t, ADA, 'admin');
    const res = await get(t, '/workspace/webhook-secret');
    expect(res.statusCode, res.body).toBe(200);
    const shown = res.json() as SecretView;
    expect(shown).toEqual({ workspace_id: t.workspaceId, secret: expect.stringMatching(/^whsec_/), previous_secret_valid_until: null });
    expect((await get(t, '/workspace/webhook-secret', admin)).json()).toEqual(shown);
    expect(await t.services.webhooks.signingSecrets(t.workspaceId)).toEqual([shown.secret]);
  });

  it('rotates the secret: the new one signs, the previous one too for 24 hours', async () => {
    t = await createTestApp({ backend });
    const before = (await get(t, '/workspace/webhook-secret')).json() as SecretView;
    const res = await post('/workspace/webhook-secret/rotate');
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json() as SecretView;
    expect(rotated.secret).not.toBe(before.secret);
    expect(rotated.previous_secret_valid_until).toBe('2026-11-23T12:00:00.000000Z');
    expect((await get(t, '/workspace/webhook-secret')).json()).toEqual(rotated);
    expect(await t.services.webhooks.signingSecrets(t.workspaceId)).toEqual([rotated.secret, before.secret]);
    t.clock.advance(24 * 3_600_000);
    expect(((await get(t, '/workspace/webhook-secret')).json() as SecretView).previous_secret_valid_until).toBeNull();
  });

  it('refuses a rotation sent with an Idempotency-Key (a retry would rotate twice), rotating nothing', async () => {
    t = await createTestApp({ backend });
    const before = await t.services.webhooks.signingSecrets(t.workspaceId);
    const res = await checkedInject(t.app, { method: 'POST', url: '/workspace/webhook-secret/rotate', headers: { authorization: `Bearer ${t.token}`, 'idempotency-key': 'k-1' } });
    expect(errorOf(res, 400)).toBe(
      'POST /workspace/webhook-secret/rotate takes no Idempotency-Key: its answer cannot be replayed; after a failed try, GET /workspace/webhook-secret shows whether it rotated',
    );
    expect(await t.services.webhooks.signingSecrets(t.workspaceId)).toEqual(before);
  });

  it('refuses the secret and its rotation to a member with 403 naming the role', async () => {
    t = await createTestApp({ backend });
    const member = await memberToken(t, ADA, 'member');
    expect(errorOf(await get(t, '/workspace/webhook-secret', member), 403)).toBe(`only owners and admins can see the webhook secret; ${ADA} is a member`);
    const before = await t.services.webhooks.signingSecrets(t.workspaceId);
    expect(errorOf(await post('/workspace/webhook-secret/rotate', member), 403)).toBe(`only owners and admins can rotate the webhook secret; ${ADA} is a member`);
    expect(await t.services.webhooks.signingSecrets(t.workspaceId)).toEqual(before);
  });

  it('requires a token and takes no query parameters', async () => {
    t = await createTestApp({ backend });
    errorOf(await t.app.inject({ method: 'GET', url: '/workspace' }), 401);
    expect(errorOf(await get(t, '/workspace?verbose=1'), 400)).toBe("unknown query parameter 'verbose'; this endpoint takes none");
  });

  it('never writes the webhook secret to the request log', async () => {
    const lines: Json[] = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => lines.push(JSON.parse(line) as Json) });
    t = await createTestApp({ backend, logger });
    const shown = (await get(t, '/workspace/webhook-secret')).json() as SecretView;
    const rotated = (await post('/workspace/webhook-secret/rotate')).json() as SecretView;
    expect(lines.length).toBeGreaterThan(0);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(shown.secret);
    expect(text).not.toContain(rotated.secret);
  });
});
