import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, closeSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * scripts/build-if-stale.mjs, which `prepare` (npm ci, an install of this checkout or its git URL,
 * `npx mediagen` in the checkout) and `prestart` run: it builds only when dist/ is missing or
 * stale, and a build never rewrites dist/ in place under a running server (issue 42: every install
 * ran the whole build, in place). Run on a small tree of the checkout's shape whose `build` script
 * records where it ran and writes a dist/ like the real one (an entry, content-named chunks).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const FAKE_BUILD = `import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
if (process.env.FAIL_BUILD) { console.error('the build failed'); process.exit(2); }
const source = readFileSync('src/a.ts', 'utf8');
const chunk = 'c-' + createHash('sha256').update(source).digest('hex').slice(0, 8) + '.js';
mkdirSync('dist/bin/chunks', { recursive: true });
mkdirSync('packages/client/src/generated', { recursive: true });
mkdirSync('packages/client/dist', { recursive: true });
writeFileSync('dist/bin/chunks/' + chunk, source);
writeFileSync('packages/client/dist/index.js', '// client built in ' + process.cwd() + '\\n');
writeFileSync('dist/main.js', 'import "./bin/chunks/' + chunk + '"; // built in ' + process.cwd() + '\\n');
writeFileSync('packages/client/src/generated/openapi.ts', 'export {};\\n');
`;

function project(): string {
  const root = join(tmpdir(), `mediagen-build-${process.pid}-${roots.length}-${Date.now()}`);
  roots.push(root);
  for (const dir of ['scripts', 'src', 'console', 'node_modules']) mkdirSync(join(root, dir), { recursive: true });
  copyFileSync(join(ROOT, 'scripts', 'build-if-stale.mjs'), join(root, 'scripts', 'build-if-stale.mjs'));
  writeFileSync(join(root, 'scripts', 'fake-build.mjs'), FAKE_BUILD);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'tree', private: true, type: 'module', scripts: { build: 'node scripts/fake-build.mjs' } }));
  writeFileSync(join(root, 'tsconfig.json'), '{}');
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  return root;
}

function buildIfStale(root: string, env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'scripts', 'build-if-stale.mjs')], { cwd: root, timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } }, (err, _stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr });
    });
  });
}

const chunks = (root: string) => readdirSync(join(root, 'dist', 'bin', 'chunks')).sort();
const leftovers = (root: string) => readdirSync(root).filter((n) => n.startsWith('.dist-'));

/** Dates the build `s` seconds back, so an edit now comes after it whatever the file system's time resolution. */
const ageBuild = (root: string, s = 10) => {
  const t = new Date(Date.now() - s * 1000);
  utimesSync(join(root, 'dist', 'main.js'), t, t);
};

describe('build-if-stale', () => {
  it('builds a tree without dist/ in a staging copy and swaps it in, then builds nothing while dist/ is current', async () => {
    const root = project();
    const first = await buildIfStale(root);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('dist/main.js is missing');
    const main = readFileSync(join(root, 'dist', 'main.js'), 'utf8');
    expect(main).toMatch(/built in .*\.dist-build-\d+$/m);
    expect(main).not.toMatch(new RegExp(`built in ${root}\\n`));
    expect(existsSync(join(root, 'packages', 'client', 'src', 'generated', 'openapi.ts'))).toBe(true);
    // The client package's build is swapped in beside dist/.
    expect(readFileSync(join(root, 'packages', 'client', 'dist', 'index.js'), 'utf8')).toMatch(/client built in .*\.dist-build-\d+/);
    expect(leftovers(root)).toEqual([]);

    const inode = statSync(join(root, 'dist', 'main.js')).ino;
    const again = await buildIfStale(root);
    expect(again).toEqual({ code: 0, stderr: '' });
    expect(statSync(join(root, 'dist', 'main.js')).ino).toBe(inode);
  });

  it('rebuilds after a source changed without writing into the dist/ a server runs from: its files keep their bytes, its chunks stay', async () => {
    const root = project();
    expect((await buildIfStale(root)).code).toBe(0);
    const [oldChunk] = chunks(root);
    // A running server holds its entry open and later imports its chunks by name.
    const fd = openSync(join(root, 'dist', 'main.js'), 'r');
    try {
      const before = readFileSync(join(root, 'dist', 'main.js'));
      ageBuild(root);
      writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 2;\n');
      const rebuilt = await buildIfStale(root);
      expect(rebuilt.code, rebuilt.stderr).toBe(0);
      expect(rebuilt.stderr).toContain('src changed since the last build');
      const held = Buffer.alloc(before.length);
      readSync(fd, held, 0, held.length, 0);
      expect(held.equals(before)).toBe(true);
      expect(readFileSync(join(root, 'dist', 'main.js')).equals(before)).toBe(false);
      expect(chunks(root)).toHaveLength(2);
      expect(chunks(root)).toContain(oldChunk);
      expect(leftovers(root)).toEqual([]);
    } finally {
      closeSync(fd);
    }
    // The generated types it copied back do not make the tree stale.
    expect(await buildIfStale(root)).toEqual({ code: 0, stderr: '' });
  });

  it('a failed build leaves dist/ as it was and no staging copy behind', async () => {
    const root = project();
    expect((await buildIfStale(root)).code).toBe(0);
    ageBuild(root);
    const before = readFileSync(join(root, 'dist', 'main.js'));
    writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 3;\n');
    const failed = await buildIfStale(root, { FAIL_BUILD: '1' });
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain('the build failed');
    expect(readFileSync(join(root, 'dist', 'main.js')).equals(before)).toBe(true);
    expect(leftovers(root)).toEqual([]);
  });

  it('is what prepare and prestart run: no script builds unconditionally at install or start', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.prepare).toBe('node scripts/build-if-stale.mjs');
    expect(pkg.scripts.prestart).toBe('node scripts/build-if-stale.mjs');
    for (const name of ['preinstall', 'install', 'postinstall', 'prepack', 'postpack']) expect(pkg.scripts[name]).toBeUndefined();
  });
});
