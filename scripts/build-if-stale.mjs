// `prepare` and `npm start`'s `prestart`: runs `npm run build` (the client's generated types, tsc,
// the bundle, the web console) only when dist/ is missing or older than a source (src/, scripts/,
// console/, package.json, a tsconfig), or the generated client types are missing. A current dist/
// costs one walk of the sources' mtimes (tens of milliseconds), so `npm ci`, `npm install <this
// checkout>`, `npx mediagen` in the checkout and `npm start` do not build again (issue 42). A git
// URL install has no dist/ (it is not committed) and builds once.
//
// The build never writes into dist/ in place, where a running server may still load files: it
// runs in a staging copy of the build's inputs (.dist-build-<pid>/), and its dist/ replaces this
// one by rename. The old bundle's chunks are linked into the new dist/ first: they are named by
// their content's hash, so a server started from the old dist/ still finds the chunks it loads on
// first use (its lazy imports), and never a newer file under an old name.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, linkSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

/** What `build` reads: a change to any of these (or a newer entry under them) rebuilds. */
const SOURCES = ['src', join('packages', 'client', 'src'), join('packages', 'client', 'package.json'), join('packages', 'client', 'tsconfig.json'), 'scripts', 'console', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.client.json'];
const GENERATED = join('packages', 'client', 'src', 'generated', 'openapi.ts');
/** Content-addressed files of a build: safe to keep beside a newer build's (the bundle's chunks, the console's assets). */
const HASHED_DIRS = [join('bin', 'chunks'), join('console', 'assets')];
/** The client package's build (`mediagen/client` resolves there); the server's bundle inlines what it needs of it. */
const CLIENT_DIST = join('packages', 'client', 'dist');

function newest(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), st.mtimeMs);
}

/** Why the tree at `root` needs `npm run build`, or undefined when dist/ is current. */
export function staleness(root) {
  const built = statSync(join(root, 'dist', 'main.js'), { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return 'dist/main.js is missing';
  if (!statSync(join(root, GENERATED), { throwIfNoEntry: false })) return `${GENERATED} is missing`;
  if (!statSync(join(root, CLIENT_DIST, 'index.js'), { throwIfNoEntry: false })) return `${CLIENT_DIST} is missing`;
  const changed = SOURCES.find((source) => newest(join(root, source)) > built);
  return changed === undefined ? undefined : `${changed} changed since the last build`;
}

/** Links into `to` each file of `from` that `to` lacks (same name = same content for HASHED_DIRS). */
function keepOldFiles(from, to) {
  if (!existsSync(from)) return;
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const [src, dest] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) keepOldFiles(src, dest);
    else if (!existsSync(dest)) linkSync(src, dest);
  }
}

/**
 * Builds the tree at `root` into a staging copy and swaps the result in as `root/dist`.
 * `run(command, args, cwd)` runs the build (tests give their own); the default is `npm run build`.
 */
export function buildAside(root, run = runNpmBuild) {
  const stage = join(root, `.dist-build-${process.pid}`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage);
  // The build is of the sources as they are now: one changed during it makes the next start build again.
  const copied = new Date();
  try {
    for (const source of SOURCES) {
      if (existsSync(join(root, source))) cpSync(join(root, source), join(stage, source), { recursive: true, preserveTimestamps: true });
    }
    // The build's tools and the packages it compiles against, read where they are.
    symlinkSync(join(root, 'node_modules'), join(stage, 'node_modules'), 'dir');
    run(stage);
    if (!existsSync(join(stage, 'dist', 'main.js'))) throw new Error('the build made no dist/main.js');
    const dist = join(root, 'dist');
    const old = join(root, `.dist-old-${process.pid}`);
    for (const dir of HASHED_DIRS) keepOldFiles(join(dist, dir), join(stage, 'dist', dir));
    // The generated client types are a source the checkout keeps (typecheck, the client's tests read them).
    const generated = join(stage, GENERATED);
    if (existsSync(generated)) {
      mkdirSync(dirname(join(root, GENERATED)), { recursive: true });
      cpSync(generated, join(root, GENERATED));
      // Dated as the sources the build read, with the directories the copy changed, so they do not make dist/ stale.
      for (let path = GENERATED; path !== '.'; path = dirname(path)) utimesSync(join(root, path), copied, copied);
    }
    if (existsSync(dist)) renameSync(dist, old);
    renameSync(join(stage, 'dist'), dist);
    rmSync(old, { recursive: true, force: true });
    // The client package's build, swapped the same way (nothing runs from it but importers of mediagen/client).
    if (existsSync(join(stage, CLIENT_DIST))) {
      const clientOld = join(root, `.client-dist-old-${process.pid}`);
      if (existsSync(join(root, CLIENT_DIST))) renameSync(join(root, CLIENT_DIST), clientOld);
      renameSync(join(stage, CLIENT_DIST), join(root, CLIENT_DIST));
      rmSync(clientOld, { recursive: true, force: true });
    }
    utimesSync(join(dist, 'main.js'), copied, copied);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

function runNpmBuild(cwd) {
  // Under npm, its own CLI; else the npm on PATH.
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm, 'run', '--silent', 'build']] : ['npm', ['run', '--silent', 'build']];
  execFileSync(command, args, { cwd, stdio: 'inherit', shell: !npm && process.platform === 'win32' });
}

function main() {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const why = staleness(root);
  if (why === undefined) return;
  process.stderr.write(`mediagen: building, about a minute (${why})\n`);
  buildAside(root);
  process.stderr.write('mediagen: built dist/\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
