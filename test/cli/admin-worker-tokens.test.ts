import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { adminJson, cleanup, oneLineError, run, tempDir } from '../e2e/binary.js';

const SECRET_RE = /^mgw_[A-Za-z0-9_-]{43}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface TokenJson {
  token_id: string;
  name: string;
  models: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  token?: string;
}

const admin = (dir: string, ...args: string[]) => run(['admin', ...args, '--data-dir', dir]);

// Each CLI run starts a node process (most of a second), so tests get more than the default time.
describe('mediagen admin worker-token (compiled binary)', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  it('create prints the secret once (only its hash is stored); list shows the tokens without it; revoke marks one', async () => {
    const dir = tempDir();
    const created = await adminJson<TokenJson>(dir, ['worker-token', 'create', '--name', 'gpu box 1', '--models', 'video/*', '--models', 'image/vendor-b/model-b-1']);
    expect(created).toEqual({
      token_id: expect.any(String),
      name: 'gpu box 1',
      models: ['video/*', 'image/vendor-b/model-b-1'],
      created_at: expect.stringMatching(ISO_RE),
      last_used_at: null,
      revoked_at: null,
      token: expect.stringMatching(SECRET_RE),
    });
    const text = await admin(dir, 'worker-token', 'create', '--name', 'all');
    expect(text.code).toBe(0);
    const [first, secret] = text.stdout.trimEnd().split('\n');
    expect(first).toMatch(/^created worker token all \([0-9a-f-]{36}\) for every model\. It is shown only this once:$/);
    expect(secret).toMatch(SECRET_RE);

    const listed = await adminJson<TokenJson[]>(dir, ['worker-token', 'list']);
    expect(listed.map((t) => [t.name, t.models])).toEqual([
      ['gpu box 1', ['video/*', 'image/vendor-b/model-b-1']],
      ['all', []],
    ]);
    expect(listed[0]).toEqual({ ...created, token: undefined });
    const listText = await admin(dir, 'worker-token', 'list');
    expect(listText.stdout).toContain(`${created.token_id}  gpu box 1  models video/* image/vendor-b/model-b-1  created `);
    expect(listText.stdout).toContain('models every model');
    expect(listText.stdout).not.toContain(created.token!.slice(4));
    expect(listText.stdout).not.toContain(secret!.slice(4));

    const store = await openSqliteStore(join(dir, 'mediagen.db'));
    try {
      const found = await store.workerTokens.findByHash(createHash('sha256').update(created.token!).digest('hex'));
      expect(found?.token.id).toBe(created.token_id);
    } finally {
      await store.close();
    }

    const revoked = await adminJson<TokenJson>(dir, ['worker-token', 'revoke', '--token-id', created.token_id]);
    expect(revoked).toMatchObject({ token_id: created.token_id, revoked_at: expect.stringMatching(ISO_RE) });
    const again = await admin(dir, 'worker-token', 'revoke', '--token-id', created.token_id);
    expect(again.stdout.trim()).toBe(`revoked worker token gpu box 1 (${created.token_id})`);
    expect((await adminJson<TokenJson[]>(dir, ['worker-token', 'list']))[0]!.revoked_at).toBe(revoked.revoked_at);
  });

  it('refuses a missing name, a bad pattern and an unknown token id in one line', async () => {
    const dir = tempDir();
    expect(oneLineError(await admin(dir, 'worker-token', 'create'))).toBe('mediagen: --name is required');
    expect(oneLineError(await admin(dir, 'worker-token', 'create', '--name', 'gpu', '--models', 'video/[ab]'))).toMatch(
      /^mediagen: models: 'video\/\[ab\]' is not a model pattern; a pattern is 1 to 200 of /,
    );
    expect(oneLineError(await admin(dir, 'worker-token', 'revoke', '--token-id', 'nope'))).toBe("mediagen: worker token 'nope' not found");
    expect(oneLineError(await admin(dir, 'worker-token', 'revoke'))).toBe('mediagen: --token-id is required');
  });

  it('admin --help shows the worker-token commands', async () => {
    const r = await run(['admin', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ worker-token create --name N \[--models PATTERN\]\.\.\. /);
    expect(r.stdout).toContain(' worker-token list\n');
    expect(r.stdout).toContain(' worker-token revoke --token-id T\n');
  });
});
