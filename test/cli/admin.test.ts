import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { adminJson, api, cleanup, oneLineError, run, startServer, tempDir } from '../e2e/binary.js';
import { TOKEN_CACHE_TTL_MS } from '../../src/services/identity/token-cache.js';

/**
 * A change made by another process reaches a running server within the token cache's life
 * (token-cache.ts); the admin command itself can take less than that (about 0.2 s here).
 */
const pastTokenCache = () => new Promise((resolve) => setTimeout(resolve, TOKEN_CACHE_TTL_MS + 50));

const OWNER = 'owner@acme.test';
const ADMIN = 'admin@acme.test';
const MEMBER = 'member@acme.test';

interface TokenRow {
  token_id: string;
  name: string;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** `mediagen admin ...args --data-dir dir` (no --json unless given). */
const admin = (dir: string, ...args: string[]) => run(['admin', ...args, '--data-dir', dir]);

/** Workspace `acme` with an owner, an admin and a member. */
async function acme(dir: string): Promise<string> {
  const ws = await adminJson<{ workspace_id: string }>(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
  for (const [email, role] of [
    [ADMIN, 'admin'],
    [MEMBER, 'member'],
  ]) {
    await adminJson(dir, ['member', 'add', '--workspace', 'acme', '--email', email!, '--role', role!, '--as', OWNER]);
  }
  return ws.workspace_id;
}

async function createToken(dir: string, as: string, name = 'ci'): Promise<{ token_id: string; token: string }> {
  return adminJson(dir, ['token', 'create', '--workspace', 'acme', '--name', name, '--as', as]);
}

// Each CLI run starts a node process (most of a second), so tests get more than the default time.
describe('mediagen admin (compiled binary)', { timeout: 60_000 }, () => {
  afterEach(cleanup);

  describe('workspace create', () => {
    it('prints the new workspace id and the normalized owner email as JSON', async () => {
      const dir = tempDir();
      const r = await admin(dir, 'workspace', 'create', '--name', 'acme', '--owner', 'Owner@Acme.test', '--json');
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(Object.keys(out).sort()).toEqual(['owner_email', 'workspace_id']);
      expect(out.workspace_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(out.owner_email).toBe('owner@acme.test');
      expect(r.stderr).toBe('');
    });

    it('refuses a second workspace with the same name with exit 1 and a clear message', async () => {
      const dir = tempDir();
      await adminJson(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
      const r = await admin(dir, 'workspace', 'create', '--name', 'acme', '--owner', 'someone@else.test', '--json');
      expect(oneLineError(r)).toBe("mediagen: a workspace named 'acme' already exists");
      expect(r.stdout).toBe('');
    });
  });

  describe('member add', () => {
    it('lets the owner add an admin and a member', async () => {
      const dir = tempDir();
      const id = await acme(dir);
      const r = await adminJson(dir, ['member', 'add', '--workspace', 'acme', '--email', 'New@Acme.test', '--role', 'admin', '--as', OWNER]);
      expect(r).toEqual({ workspace_id: id, email: 'new@acme.test', role: 'admin' });
      const m = await adminJson(dir, ['member', 'add', '--workspace', 'acme', '--email', 'new@acme.test', '--role', 'member', '--as', OWNER]);
      expect(m).toEqual({ workspace_id: id, email: 'new@acme.test', role: 'member' });
    });

    it('is refused unless --as is the owner: admins, members and non-members get exit 1 saying only owners can', async () => {
      const dir = tempDir();
      await acme(dir);
      for (const as of [ADMIN, MEMBER, 'stranger@acme.test']) {
        const r = await admin(dir, 'member', 'add', '--workspace', 'acme', '--email', 'x@acme.test', '--role', 'member', '--as', as, '--json');
        expect(oneLineError(r), as).toMatch(/only owners can add members/);
        expect(r.stdout).toBe('');
      }
      // Nobody was added.
      const r = await admin(dir, 'token', 'create', '--workspace', 'acme', '--name', 'n', '--as', 'x@acme.test');
      expect(oneLineError(r)).toMatch(/x@acme.test is not a member/);
    });

    it('refuses a role other than admin or member', async () => {
      const dir = tempDir();
      await acme(dir);
      for (const role of ['owner', 'superuser', 'ADMIN']) {
        const r = await admin(dir, 'member', 'add', '--workspace', 'acme', '--email', 'x@acme.test', '--role', role, '--as', OWNER);
        expect(oneLineError(r), role).toMatch(/role must be admin or member/);
      }
    });
  });
  describe('token create', () => {
    it('gives owners and admins a token id and a token, and refuses members and non-members', async () => {
      const dir = tempDir();
      await acme(dir);
      for (const as of [OWNER, ADMIN]) {
        const t = await createToken(dir, as);
        expect(Object.keys(t).sort()).toEqual(['token', 'token_id']);
        expect(t.token).toMatch(/^mg_[A-Za-z0-9_-]{43}$/);
      }
      for (const as of [MEMBER, 'stranger@acme.test']) {
        const r = await admin(dir, 'token', 'create', '--workspace', 'acme', '--name', 'ci', '--as', as, '--json');
        expect(oneLineError(r)).toMatch(/only owners and admins can create API tokens/);
        expect(r.stdout).toBe('');
      }
    });

    it('gives a token its own limits, which token list shows, and refuses malformed ones', async () => {
      const dir = tempDir();
      await acme(dir);
      const limits = { spend_limit_usd: '0.050000', spend_period: 'day', models: ['image/vendor-b/*'], max_concurrent_jobs: 3 };
      const made = await adminJson<{ token: string; token_id: string; limits: unknown }>(dir, [
        'token', 'create', '--workspace', 'acme', '--name', 'app', '--as', OWNER,
        '--spend-limit-usd', '0.05', '--spend-period', 'day', '--model', 'image/vendor-b/*', '--max-concurrent-jobs', '3',
      ]);
      expect(made.limits).toEqual(limits);
      const listed = await adminJson<(TokenRow & { limits: unknown })[]>(dir, ['token', 'list', '--workspace', 'acme']);
      expect(listed.find((x) => x.token_id === made.token_id)!.limits).toEqual(limits);
      // The API's own checks (test/http/token-budgets.test.ts has each): two, to show the CLI reaches them.
      for (const [flags, message] of [
        [['--spend-limit-usd', '5', '--spend-period', 'week'], /'spend_period' must be one of day, month, total/],
        [['--model', 'image/(a|b)'], /is not a model pattern/],
      ] as const) {
        const r = await admin(dir, 'token', 'create', '--workspace', 'acme', '--name', 'bad', '--as', OWNER, ...flags);
        expect(oneLineError(r), flags.join(' ')).toMatch(message);
      }
    });

    it('makes a token that works against the running server and is stored only as its sha256 hash', async () => {
      const dir = tempDir();
      await acme(dir);
      const server = await startServer(['--port', '0', '--data-dir', dir]);
      const { token } = await createToken(dir, ADMIN);
      expect((await api(server.url, '/jobs', token)).status).toBe(200);
      expect(server.stdout()).not.toContain(token);
      expect(server.stderr()).not.toContain(token);

      // Neither the database file nor its WAL holds the token in clear.
      const files = readdirSync(dir).filter((f) => f.startsWith('mediagen.db'));
      expect(files).toContain('mediagen.db');
      for (const f of files) {
        const bytes = readFileSync(join(dir, f));
        expect(bytes.includes(token), f).toBe(false);
        expect(bytes.includes(token.slice(3)), f).toBe(false);
      }

      const db = new Database(join(dir, 'mediagen.db'), { readonly: true, fileMustExist: true });
      try {
        const rows = db.prepare('SELECT * FROM api_tokens').all() as Record<string, unknown>[];
        expect(rows).toHaveLength(1);
        const row = rows[0]!;
        expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
        expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
        for (const v of Object.values(row)) expect(String(v)).not.toContain(token.slice(3));
      } finally {
        db.close();
      }
    });
  });

  describe('token list', () => {
    it('shows name and times but never the token or its hash; last_used_at is set once the token is used', async () => {
      const dir = tempDir();
      await acme(dir);
      const created = await createToken(dir, OWNER, 'deploy bot');
      const before = await adminJson<TokenRow[]>(dir, ['token', 'list', '--workspace', 'acme']);
      expect(before).toHaveLength(1);
      const t = before[0]!;
      expect(t).toMatchObject({ token_id: created.token_id, name: 'deploy bot', created_by: OWNER, last_used_at: null, revoked_at: null });
      expect(Date.parse(t.created_at)).not.toBeNaN();

      const raw = await admin(dir, 'token', 'list', '--workspace', 'acme', '--json');
      const hash = createHash('sha256').update(created.token).digest('hex');
      expect(raw.stdout).not.toContain(created.token.slice(3));
      expect(raw.stdout).not.toContain(hash);
      expect(Object.keys(t).sort()).toEqual(['created_at', 'created_by', 'last_used_at', 'limits', 'name', 'revoked_at', 'token_id']);

      const server = await startServer(['--port', '0', '--data-dir', dir]);
      expect((await api(server.url, '/jobs', created.token)).status).toBe(200);
      const after = await adminJson<TokenRow[]>(dir, ['token', 'list', '--workspace', 'acme']);
      expect(after[0]!.last_used_at).not.toBeNull();
      expect(Date.parse(after[0]!.last_used_at!)).toBeGreaterThanOrEqual(Date.parse(t.created_at));
      expect(after[0]!.revoked_at).toBeNull();

      const text = await admin(dir, 'token', 'list', '--workspace', 'acme');
      expect(text.code).toBe(0);
      expect(text.stdout).toContain('deploy bot');
      expect(text.stdout).not.toContain(created.token.slice(3));
      expect(text.stdout).not.toContain(hash);
    });
  });

  describe('token revoke', () => {
    it('takes effect on a server running on the same data dir: the token then gets 401', async () => {
      const dir = tempDir();
      await acme(dir);
      const server = await startServer(['--port', '0', '--data-dir', dir]);
      const revoked = await createToken(dir, OWNER, 'old');
      const kept = await createToken(dir, OWNER, 'new');
      expect((await api(server.url, '/jobs', revoked.token)).status).toBe(200);

      const r = await adminJson<TokenRow>(dir, ['token', 'revoke', '--workspace', 'acme', '--token-id', revoked.token_id, '--as', ADMIN]);
      expect(r.token_id).toBe(revoked.token_id);
      expect(r.revoked_at).not.toBeNull();

      await pastTokenCache();
      const res = await api(server.url, '/jobs', revoked.token);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatch(/revoked/);
      expect((await api(server.url, '/jobs', kept.token)).status).toBe(200);
      expect(server.child.exitCode).toBeNull();

      const list = await adminJson<TokenRow[]>(dir, ['token', 'list', '--workspace', 'acme']);
      expect(list.find((t) => t.token_id === revoked.token_id)!.revoked_at).toBe(r.revoked_at);
      expect(list.find((t) => t.token_id === kept.token_id)!.revoked_at).toBeNull();
    });

    it('is refused for members and for unknown token ids', async () => {
      const dir = tempDir();
      await acme(dir);
      const t = await createToken(dir, OWNER);
      const r = await admin(dir, 'token', 'revoke', '--workspace', 'acme', '--token-id', t.token_id, '--as', MEMBER);
      expect(oneLineError(r)).toMatch(/only owners and admins can revoke API tokens/);
      const unknown = await admin(dir, 'token', 'revoke', '--workspace', 'acme', '--token-id', 'nope', '--as', OWNER);
      expect(oneLineError(unknown)).toMatch(/token 'nope' not found/);
    });
  });

  describe('workspace set', () => {
    it('--api-access off makes the running server answer 403 with an error saying API access is disabled; on restores 200', async () => {
      const dir = tempDir();
      await acme(dir);
      const { token } = await createToken(dir, OWNER);
      const server = await startServer(['--port', '0', '--data-dir', dir]);
      expect((await api(server.url, '/jobs', token)).status).toBe(200);

      const off = await adminJson(dir, ['workspace', 'set', '--workspace', 'acme', '--api-access', 'off']);
      expect(off.api_access).toBe(false);
      await pastTokenCache();
      const denied = await api(server.url, '/jobs', token);
      expect(denied.status).toBe(403);
      expect(Object.keys(denied.body)).toEqual(['error']);
      expect(denied.body.error).toMatch(/API access is disabled/);

      const on = await adminJson(dir, ['workspace', 'set', '--workspace', 'acme', '--api-access', 'on']);
      expect(on.api_access).toBe(true);
      await pastTokenCache();
      expect((await api(server.url, '/jobs', token)).status).toBe(200);
    });

    it('stores --max-concurrent-jobs and --max-backlogged-jobs', async () => {
      const dir = tempDir();
      const id = await acme(dir);
      const out = await adminJson(dir, ['workspace', 'set', '--workspace', 'acme', '--max-concurrent-jobs', '7', '--max-backlogged-jobs', '0']);
      expect(out).toEqual({ workspace_id: id, name: 'acme', api_access: true, max_concurrent_jobs: 7, max_backlogged_jobs: 0, priority: 5 });
      // A later change of one setting keeps the others.
      const again = await adminJson(dir, ['workspace', 'set', '--workspace', 'acme', '--max-backlogged-jobs', '25']);
      expect(again).toMatchObject({ max_concurrent_jobs: 7, max_backlogged_jobs: 25, api_access: true });
    });

    it('stores --priority from 0 to 9 and refuses any other value, keeping the workspace as it was', async () => {
      const dir = tempDir();
      await acme(dir);
      expect(await adminJson(dir, ['workspace', 'set', '--workspace', 'acme', '--priority', '8'])).toMatchObject({ priority: 8, max_concurrent_jobs: 4 });
      for (const bad of ['10', '-1', 'high', '2.5']) {
        const r = await admin(dir, 'workspace', 'set', '--workspace', 'acme', '--priority', bad);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/priority must be a whole number/);
      }
      expect(await adminJson(dir, ['workspace', 'set', '--workspace', 'acme'])).toMatchObject({ priority: 8 });
    });

    it('rejects invalid limits and api-access values with exit 1 and leaves the workspace unchanged', async () => {
      const dir = tempDir();
      await acme(dir);
      const before = await adminJson(dir, ['workspace', 'set', '--workspace', 'acme']);
      for (const bad of [
        ['--max-concurrent-jobs', '0'],
        ['--max-concurrent-jobs', '-1'],
        ['--max-concurrent-jobs=-1'],
        ['--max-concurrent-jobs', 'abc'],
        ['--max-concurrent-jobs', '1.5'],
        ['--max-backlogged-jobs', '-1'],
        ['--max-backlogged-jobs=-1'],
        ['--max-backlogged-jobs', 'abc'],
        ['--max-backlogged-jobs', ''],
        ['--api-access', 'maybe'],
      ]) {
        const r = await admin(dir, 'workspace', 'set', '--workspace', 'acme', ...bad, '--json');
        expect(oneLineError(r), bad.join(' ')).toMatch(new RegExp(bad[0]!.replace(/^--|=.*$/g, '')));
        expect(r.stdout).toBe('');
      }
      expect(await adminJson(dir, ['workspace', 'set', '--workspace', 'acme'])).toEqual(before);
    });
  });

  describe('bad command lines', () => {
    it.each([
      ['an unknown admin command', ['admin', 'frobnicate'], /unknown admin command 'frobnicate'/],
      ['an unknown admin subcommand', ['admin', 'token', 'delete'], /unknown admin command 'token delete'/],
      ['no admin command', ['admin'], /missing admin command/],
      ['an unknown top-level command', ['frobnicate'], /unknown command 'frobnicate'/],
      ['an unknown admin flag', ['admin', 'token', 'list', '--workspace', 'acme', '--colour'], /unknown option '--colour' for 'admin token list'; its options are --workspace, /],
      ['an unknown serve flag', ['serve', '--colour'], /Unknown option '--colour'/],
      ['a missing --workspace', ['admin', 'token', 'list'], /--workspace is required/],
      ['a missing --as', ['admin', 'token', 'create', '--workspace', 'acme', '--name', 'n'], /--as is required/],
      ['a missing --owner', ['admin', 'workspace', 'create', '--name', 'n'], /--owner is required/],
      ['a flag without its value', ['admin', 'token', 'list', '--workspace'], /--workspace/],
    ])('%s exits 1 with a one-line message and no stack trace', async (_what, args, message) => {
      const dir = tempDir();
      const r = await run([...args, '--data-dir', dir]);
      expect(oneLineError(r)).toMatch(message);
      expect(r.stdout).toBe('');
    });

    it('an unknown workspace exits 1 with a one-line message', async () => {
      const dir = tempDir();
      await adminJson(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
      const r = await admin(dir, 'token', 'list', '--workspace', 'nope');
      expect(oneLineError(r)).toBe("mediagen: workspace 'nope' not found");
    });
  });

  it('accepts the workspace as its id or its name', async () => {
    const dir = tempDir();
    const id = await acme(dir);
    // A second workspace, so that a lookup that ignored --workspace would be caught.
    await adminJson(dir, ['workspace', 'create', '--name', 'other', '--owner', 'owner@other.test']);

    const byId = await adminJson(dir, ['member', 'add', '--workspace', id, '--email', 'x@acme.test', '--role', 'member', '--as', OWNER]);
    expect(byId.workspace_id).toBe(id);
    const t1 = await adminJson<{ token_id: string }>(dir, ['token', 'create', '--workspace', id, '--name', 'by-id', '--as', OWNER]);
    const t2 = await adminJson<{ token_id: string }>(dir, ['token', 'create', '--workspace', 'acme', '--name', 'by-name', '--as', OWNER]);
    const listById = await adminJson<TokenRow[]>(dir, ['token', 'list', '--workspace', id]);
    const listByName = await adminJson<TokenRow[]>(dir, ['token', 'list', '--workspace', 'acme']);
    expect(listById).toEqual(listByName);
    expect(listById.map((t) => t.token_id)).toEqual([t1.token_id, t2.token_id]);
    expect(await adminJson<TokenRow[]>(dir, ['token', 'list', '--workspace', 'other'])).toEqual([]);

    const set = await adminJson(dir, ['workspace', 'set', '--workspace', id, '--max-concurrent-jobs', '3']);
    expect(set).toMatchObject({ workspace_id: id, name: 'acme', max_concurrent_jobs: 3 });
    const revoked = await adminJson<TokenRow>(dir, ['token', 'revoke', '--workspace', id, '--token-id', t1.token_id, '--as', OWNER]);
    expect(revoked.revoked_at).not.toBeNull();
  });
});
