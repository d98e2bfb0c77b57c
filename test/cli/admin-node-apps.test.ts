import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminJson, api, cleanup, oneLineError, run, startServer, tempDir } from '../e2e/binary.js';

const OWNER = 'owner@acme.test';
const MEMBER = 'member@acme.test';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const INPUT = { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'], title: 'kept as given' };
const OUTPUT = { type: 'object', properties: { url: { type: 'string' } } };

/** `mediagen admin ...args --data-dir dir` (no --json unless given). */
const admin = (dir: string, ...args: string[]) => run(['admin', ...args, '--data-dir', dir]);

/** Workspace `acme` (owner and a plain member), workspace `other`, and the two schema files. */
async function setup(): Promise<{ dir: string; input: string; output: string }> {
  const dir = tempDir();
  await adminJson(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
  await adminJson(dir, ['member', 'add', '--workspace', 'acme', '--email', MEMBER, '--role', 'member', '--as', OWNER]);
  await adminJson(dir, ['workspace', 'create', '--name', 'other', '--owner', 'owner@other.test']);
  const input = join(dir, 'input.json');
  const output = join(dir, 'output.json');
  writeFileSync(input, JSON.stringify(INPUT));
  writeFileSync(output, JSON.stringify(OUTPUT));
  return { dir, input, output };
}

const create = (dir: string, ...extra: string[]) =>
  adminJson<{ node_app_id: string }>(dir, ['node-app', 'create', '--workspace', 'acme', '--name', 'Upscaler', '--as', OWNER, ...extra]);

const publishArgs = (nodeApp: string, input: string, output: string, as = OWNER) => [
  'node-app', 'publish', '--node-app', nodeApp, '--input-schema', input, '--output-schema', output, '--as', as,
];

// Each CLI run starts a node process (most of a second), so tests get more than the default time.
describe('mediagen admin node-app (compiled binary)', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  it('create prints exactly {node_app_id}; publish twice prints exactly {node_app_version_id, version} with versions 1 and 2', async () => {
    const { dir, input, output } = await setup();
    const app = await create(dir);
    expect(Object.keys(app)).toEqual(['node_app_id']);
    expect(app.node_app_id).toMatch(UUID_RE);
    const v1 = await adminJson(dir, [...publishArgs(app.node_app_id, input, output), '--example-output', 'https://cdn.test/a.png']);
    const v2 = await adminJson(dir, publishArgs(app.node_app_id, input, output, MEMBER));
    expect(Object.keys(v1).sort()).toEqual(['node_app_version_id', 'version']);
    expect(Object.keys(v2).sort()).toEqual(['node_app_version_id', 'version']);
    expect([v1.version, v2.version]).toEqual([1, 2]);
    expect(v1.node_app_version_id).toMatch(UUID_RE);
    expect(v2.node_app_version_id).not.toBe(v1.node_app_version_id);
  });

  it('without --json each command prints one line naming what it made', async () => {
    const { dir, input, output } = await setup();
    const c = await admin(dir, 'node-app', 'create', '--workspace', 'acme', '--name', 'Upscaler Pro', '--as', MEMBER);
    expect(c.code).toBe(0);
    expect(c.stdout).toMatch(/^created node app Upscaler Pro \(([0-9a-f-]{36})\), slug upscaler-pro\n$/);
    const id = /\(([0-9a-f-]{36})\)/.exec(c.stdout)![1]!;
    const p = await admin(dir, ...publishArgs(id, input, output));
    expect(p.code).toBe(0);
    expect(p.stdout).toMatch(/^published Upscaler Pro version 1 \([0-9a-f-]{36}\) at \d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
  });

  it('what it publishes is listed by a running server, newest first, with the author and the schemas', async () => {
    const { dir, input, output } = await setup();
    const server = await startServer(['--port', '0', '--data-dir', dir]);
    const { token } = await adminJson<{ token: string }>(dir, ['token', 'create', '--workspace', 'acme', '--name', 'ci', '--as', OWNER]);
    const { node_app_id: id } = await adminJson<{ node_app_id: string }>(dir, [
      'node-app', 'create', '--workspace', 'acme', '--name', 'Upscaler', '--slug', 'up-2', '--description', 'bigger', '--as', 'Member@Acme.test',
    ]);
    await adminJson(dir, [...publishArgs(id, input, output), '--example-output', 'https://cdn.test/1.png']);
    await adminJson(dir, [...publishArgs(id, input, output), '--example-output', 'https://cdn.test/2a.png', '--example-output', 'http://cdn.test/2b.png']);
    const res = await api(server.url, `/node-apps/${id}/versions`, token);
    expect(res.status).toBe(200);
    const items = res.body.items as Record<string, unknown>[];
    expect(items.map((v) => v.version)).toEqual([2, 1]);
    expect(items[0]).toMatchObject({
      id,
      author_id: MEMBER,
      username: 'member',
      name: 'Upscaler',
      slug: 'up-2',
      description: 'bigger',
      scope: 'workspace',
      example_outputs: ['https://cdn.test/2a.png', 'http://cdn.test/2b.png'],
      input_openapi_schema: INPUT,
      output_openapi_schema: { ...OUTPUT, required: [] },
    });
    expect(res.body.next_cursor).toBeNull();
  });

  it("refuses an --as who is not a member of the workspace, or not of the app's workspace", async () => {
    const { dir, input, output } = await setup();
    const r = await admin(dir, 'node-app', 'create', '--workspace', 'acme', '--name', 'X', '--as', 'owner@other.test', '--json');
    expect(oneLineError(r)).toBe("mediagen: only members of workspace 'acme' can create node apps; owner@other.test is not a member");
    expect(r.stdout).toBe('');
    const { node_app_id: id } = await create(dir);
    const p = await admin(dir, ...publishArgs(id, input, output, 'owner@other.test'));
    expect(oneLineError(p)).toBe("mediagen: only members of workspace 'acme' can publish its node apps; owner@other.test is not a member");
  });

  it('refuses a slug already taken in the workspace, given or made from the name, but not in another workspace', async () => {
    const { dir } = await setup();
    await create(dir); // slug `upscaler`
    const given = await admin(dir, 'node-app', 'create', '--workspace', 'acme', '--name', 'Other', '--slug', 'upscaler', '--as', OWNER);
    expect(oneLineError(given)).toBe("mediagen: workspace 'acme' already has a node app with slug 'upscaler'; choose another slug");
    const derived = await admin(dir, 'node-app', 'create', '--workspace', 'acme', '--name', ' UPSCALER ', '--as', OWNER);
    expect(oneLineError(derived)).toMatch(/already has a node app with slug 'upscaler'/);
    const elsewhere = await adminJson(dir, ['node-app', 'create', '--workspace', 'other', '--name', 'Upscaler', '--as', 'owner@other.test']);
    expect(elsewhere.node_app_id).toMatch(UUID_RE);
  });

  it('refuses a malformed slug, an empty name and an unknown workspace', async () => {
    const { dir } = await setup();
    const slug = await admin(dir, 'node-app', 'create', '--workspace', 'acme', '--name', 'X', '--slug', 'Has_Caps', '--as', OWNER);
    expect(oneLineError(slug)).toMatch(/slug must be 1 to 100 characters .* got 'Has_Caps'/);
    const name = await admin(dir, 'node-app', 'create', '--workspace', 'acme', '--name', '   ', '--as', OWNER);
    expect(oneLineError(name)).toMatch(/node app name must be 1 to 200 characters/);
    const ws = await admin(dir, 'node-app', 'create', '--workspace', 'nope', '--name', 'X', '--as', OWNER);
    expect(oneLineError(ws)).toBe("mediagen: workspace 'nope' not found");
  });

  it('refuses schema files that are missing, not JSON, too large, or not an object with type and properties, naming the file', async () => {
    const { dir, input, output } = await setup();
    const { node_app_id: id } = await create(dir);
    const file = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    const cases: [string, RegExp][] = [
      [join(dir, 'missing.json'), /missing\.json cannot be read: no such file/],
      [file('broken.json', '{"type": "object",'), /broken\.json is not JSON/],
      [file('big.json', JSON.stringify({ ...INPUT, description: 'x'.repeat(1024 * 1024) })), /big\.json is larger than 1 MiB/],
      [file('array.json', '[]'), /array\.json must be a JSON object/],
      [file('no-props.json', '{"type": "object"}'), /no-props\.json: 'properties' must be an object/],
      [file('req.json', '{"type": "object", "properties": {}, "required": "prompt"}'), /req\.json: 'required' must be an array of strings/],
    ];
    for (const [bad, message] of cases) {
      const r = await admin(dir, ...publishArgs(id, bad, output));
      expect(oneLineError(r), bad).toMatch(/^mediagen: --input-schema /);
      expect(oneLineError(r), bad).toMatch(message);
    }
    const out = await admin(dir, ...publishArgs(id, input, join(dir, 'gone.json')));
    expect(oneLineError(out)).toMatch(/^mediagen: --output-schema .*gone\.json cannot be read/);
    // Nothing was published by the refusals: the first real publish is version 1.
    expect((await adminJson(dir, publishArgs(id, input, output))).version).toBe(1);
  });

  it('refuses example outputs that are not absolute http(s) URLs, longer than 2048 characters, or more than 20', async () => {
    const { dir, input, output } = await setup();
    const { node_app_id: id } = await create(dir);
    for (const url of ['ftp://cdn.test/a.png', '/relative.png', 'https:cdn.test', 'https://cdn.test/a b.png']) {
      const r = await admin(dir, ...publishArgs(id, input, output), '--example-output', url);
      expect(oneLineError(r), url).toBe(`mediagen: example output '${url}' is not an absolute http or https URL`);
    }
    const long = await admin(dir, ...publishArgs(id, input, output), '--example-output', `https://cdn.test/${'a'.repeat(2049)}`);
    expect(oneLineError(long)).toMatch(/at most 2048 characters/);
    const many = Array.from({ length: 21 }, (_, i) => ['--example-output', `https://cdn.test/${i}.png`]).flat();
    expect(oneLineError(await admin(dir, ...publishArgs(id, input, output), ...many))).toMatch(/at most 20 example outputs, got 21/);
    // Exactly 20 is accepted.
    expect((await adminJson(dir, [...publishArgs(id, input, output), ...many.slice(0, 40)])).version).toBe(1);
  });

  it('admin --help shows both node-app commands with every flag they take', async () => {
    const r = await run(['admin', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ node-app create --workspace W --name N \[--slug S\] \[--description D\]\n\s+--as EMAIL /);
    expect(r.stdout).toMatch(/ node-app publish --node-app A --input-schema FILE --output-schema FILE\n\s+\[--example-output URL\]\.\.\. \[--graph FILE\] --as EMAIL /);
  });

  it('refuses an unknown or malformed node app id as not found', async () => {
    const { dir, input, output } = await setup();
    for (const id of ['3f1d2c4b-0000-4000-8000-000000000000', 'upscaler']) {
      expect(oneLineError(await admin(dir, ...publishArgs(id, input, output)))).toBe(`mediagen: node app '${id}' not found`);
    }
  });
});
