// `npm start`'s prestart: runs the whole `npm run build` (the client's generated types, tsc, the
// bundle, the web console) only when dist/ is older than a source (src/, scripts/, console/,
// package.json, a tsconfig) or missing, or the generated client types are missing (`npm ci
// --ignore-scripts`), so a start after `npm ci` (which builds through `prepare`) does not build again.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

/** What `build` reads: a change to any of these (or a newer entry under them) rebuilds. */
const SOURCES = ['src', join('packages', 'client', 'src'), join('packages', 'client', 'package.json'), join('packages', 'client', 'tsconfig.json'), 'scripts', 'console', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.client.json'];
const GENERATED = join('packages', 'client', 'src', 'generated', 'openapi.ts');

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
  const changed = SOURCES.find((source) => newest(join(root, source)) > built);
  return changed === undefined ? undefined : `${changed} changed since the last build`;
}

function main() {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const why = staleness(root);
  if (why === undefined) return;
  process.stderr.write(`mediagen: building (${why})\n`);
  // Under npm, its own CLI; else the npm on PATH.
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm, 'run', '--silent', 'build']] : ['npm', ['run', '--silent', 'build']];
  execFileSync(command, args, { cwd: root, stdio: 'inherit', shell: !npm && process.platform === 'win32' });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
