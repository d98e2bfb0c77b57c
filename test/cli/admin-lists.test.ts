import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminJson, cleanup, oneLineError, run, tempDir } from '../e2e/binary.js';

const OWNER = 'owner@acme.test';
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const admin = (dir: string, ...args: string[]) => run(['admin', ...args, '--data-dir', dir]);

// Each CLI run starts a node process (most of a second), so tests get more than the default time.
describe('mediagen admin list commands (compiled binary)', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  it('workspace list shows every workspace, oldest first, with its settings', async () => {
    const dir = tempDir();
    const acme = await adminJson<{ workspace_id: string }>(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
    const beta = await adminJson<{ workspace_id: string }>(dir, ['workspace', 'create', '--name', 'beta', '--owner', 'o@beta.test']);
    await adminJson(dir, ['workspace', 'set', '--workspace', 'beta', '--api-access', 'off', '--max-concurrent-jobs', '2']);

    const list = await adminJson<Record<string, unknown>[]>(dir, ['workspace', 'list']);
    expect(list).toEqual([
      { workspace_id: acme.workspace_id, name: 'acme', api_access: true, max_concurrent_jobs: 4, max_backlogged_jobs: 100, priority: 5, created_at: expect.stringMatching(ISO_RE) },
      { workspace_id: beta.workspace_id, name: 'beta', api_access: false, max_concurrent_jobs: 2, max_backlogged_jobs: 100, priority: 5, created_at: expect.stringMatching(ISO_RE) },
    ]);
    const text = await admin(dir, 'workspace', 'list');
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${acme.workspace_id}  acme  api access on  max concurrent jobs 4, max backlogged jobs 100, priority 5  created `));
    expect(lines[1]).toMatch(new RegExp(`^${beta.workspace_id}  beta  api access off  max concurrent jobs 2, `));
  });

  it('member list shows the owner first, then members as added, with their roles; an unknown workspace is refused', async () => {
    const dir = tempDir();
    const { workspace_id: id } = await adminJson<{ workspace_id: string }>(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
    await adminJson(dir, ['member', 'add', '--workspace', 'acme', '--email', 'Zed@Acme.test', '--role', 'admin', '--as', OWNER]);
    await adminJson(dir, ['member', 'add', '--workspace', 'acme', '--email', 'amy@acme.test', '--role', 'member', '--as', OWNER]);

    const members = await adminJson<Record<string, unknown>[]>(dir, ['member', 'list', '--workspace', id]);
    expect(members).toEqual([
      { email: OWNER, role: 'owner', added_at: expect.stringMatching(ISO_RE) },
      { email: 'zed@acme.test', role: 'admin', added_at: expect.stringMatching(ISO_RE) },
      { email: 'amy@acme.test', role: 'member', added_at: expect.stringMatching(ISO_RE) },
    ]);
    expect(await adminJson(dir, ['member', 'list', '--workspace', 'acme'])).toEqual(members);
    const text = await admin(dir, 'member', 'list', '--workspace', 'acme');
    expect(text.stdout).toMatch(/^owner@acme\.test {2}owner {2}added \S+\nzed@acme\.test {2}admin {2}added \S+\namy@acme\.test {2}member {2}added \S+\n$/);

    expect(oneLineError(await admin(dir, 'member', 'list', '--workspace', 'nope'))).toBe("mediagen: workspace 'nope' not found");
  });

  it("node-app list shows a workspace's apps with their newest version (null before the first publish), not another workspace's", async () => {
    const dir = tempDir();
    await adminJson(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
    await adminJson(dir, ['workspace', 'create', '--name', 'other', '--owner', 'o@other.test']);
    const schema = join(dir, 'schema.json');
    writeFileSync(schema, JSON.stringify({ type: 'object', properties: { prompt: { type: 'string' } } }));
    const a = await adminJson<{ node_app_id: string }>(dir, ['node-app', 'create', '--workspace', 'acme', '--name', 'Upscaler', '--as', OWNER]);
    const b = await adminJson<{ node_app_id: string }>(dir, ['node-app', 'create', '--workspace', 'acme', '--name', 'Relight', '--description', 'new light', '--as', OWNER]);
    await adminJson(dir, ['node-app', 'create', '--workspace', 'other', '--name', 'Elsewhere', '--as', 'o@other.test']);
    for (let i = 0; i < 2; i++) {
      await adminJson(dir, ['node-app', 'publish', '--node-app', a.node_app_id, '--input-schema', schema, '--output-schema', schema, '--as', OWNER]);
    }

    const apps = await adminJson<Record<string, unknown>[]>(dir, ['node-app', 'list', '--workspace', 'acme']);
    expect(apps).toEqual([
      {
        node_app_id: a.node_app_id,
        name: 'Upscaler',
        slug: 'upscaler',
        description: '',
        author: OWNER,
        last_version: 2,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      },
      {
        node_app_id: b.node_app_id,
        name: 'Relight',
        slug: 'relight',
        description: 'new light',
        author: OWNER,
        last_version: null,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      },
    ]);
    expect(Date.parse(apps[0]!.updated_at as string)).toBeGreaterThan(Date.parse(apps[0]!.created_at as string));
    const text = await admin(dir, 'node-app', 'list', '--workspace', 'acme');
    expect(text.stdout).toContain(`${a.node_app_id}  Upscaler  slug upscaler  version 2  by ${OWNER}  updated `);
    expect(text.stdout).toContain(`${b.node_app_id}  Relight  slug relight  no version yet  by ${OWNER}  updated `);
    expect(text.stdout).not.toContain('Elsewhere');

    expect(oneLineError(await admin(dir, 'node-app', 'list', '--workspace', 'nope'))).toBe("mediagen: workspace 'nope' not found");
  });
});
