import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPng } from '../helpers/media.js';
import { cleanup, startServer, tempDir } from './binary.js';

const PACKAGE_DIR = fileURLToPath(new URL('../../packages/client', import.meta.url));
const MODEL = 'image/vendor-a/model-a-2/medium';
const exec = promisify(execFile);

/** The environment without what an `npm run`/`npx` around the test set for its own npm. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return { ...env, NO_UPDATE_NOTIFIER: '1', ...extra };
}

const npm = (args: string[], cwd: string, env: Record<string, string> = {}) => exec('npm', args, { cwd, env: cleanEnv(env), maxBuffer: 16 * 1024 * 1024 });

/**
 * @mediagen/client as a project that wants only the client gets it (issue 42): `npm pack` of
 * packages/client (its prepack builds dist/), then `npm install <tarball>` into an empty project
 * with an empty cache and --offline, which works only because the package has no dependency and
 * builds nothing; then its binary and its import run a job on a live server.
 */
describe('the @mediagen/client tarball', { timeout: 240_000 }, () => {
  let consumer: string;
  let server: { url: string; token: string };
  let packed: { filename: string; size: number; files: { path: string }[] };

  beforeAll(async () => {
    const started = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '100']);
    const [, token] = await started.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    server = { url: started.url, token: token! };

    const out = tempDir('mediagen-pack-');
    const { stdout } = await npm(['pack', '--json', '--pack-destination', out], PACKAGE_DIR);
    packed = (JSON.parse(stdout) as (typeof packed)[])[0]!;
    consumer = tempDir('mediagen-consumer-');
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
    await npm(['install', '--offline', '--cache', tempDir('mediagen-npm-cache-'), '--no-audit', '--no-fund', join(out, packed.filename)], consumer);
  }, 240_000);
  afterAll(cleanup);

  it('ships built JavaScript and declarations only: no TypeScript source, no dependency, no install script', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js']));
    expect(paths.filter((p) => !(p === 'package.json' || p === 'README.md' || /^dist\/.*\.(js|d\.ts)$/.test(p)))).toEqual([]);
    expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);

    const installed = JSON.parse(readFileSync(join(consumer, 'node_modules/@mediagen/client/package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    expect(installed.dependencies ?? {}).toEqual({});
    expect(Object.keys(installed.scripts ?? {}).filter((s) => /^(pre|post)?install$|^prepare$/.test(s))).toEqual([]);
    // Nothing but the package itself came into the project.
    expect(readdirSync(join(consumer, 'node_modules')).filter((n) => !n.startsWith('.')).sort()).toEqual(['@mediagen']);
    expect(readdirSync(join(consumer, 'node_modules/@mediagen'))).toEqual(['client']);
  });

  it('mediagen-client generate --wait --out writes the PNG of a job run by a live server', async () => {
    const out = tempDir();
    const bin = join(consumer, 'node_modules/.bin/mediagen-client');
    const { stdout, stderr } = await exec(bin, ['generate', MODEL, '--prompt', 'a lighthouse', '--set', 'aspect_ratio=1:1', '--set', 'resolution=1K', '--wait', '--out', out], {
      cwd: consumer,
      env: cleanEnv({ MEDIAGEN_URL: server.url, MEDIAGEN_TOKEN: server.token }),
    });
    const [file] = readdirSync(out);
    expect(stdout).toBe(`${join(out, file!)}\n`);
    expect(stderr).toMatch(/completed after/);
    expect(isPng(readFileSync(join(out, file!)))).toBe(true);

    const help = await exec(bin, ['--help'], { cwd: consumer, env: cleanEnv() });
    expect(help.stdout).toContain('mediagen-client generate MODEL');
    expect(help.stdout).not.toMatch(/(^|\s)mediagen (generate|jobs|models)/);
  });

  it("imports as '@mediagen/client' in Node and runs a job to completion", async () => {
    const script = [
      "import { Mediagen } from '@mediagen/client';",
      'const mg = new Mediagen({ baseUrl: process.env.URL, token: process.env.TOKEN });',
      `const job = await mg.generate('${MODEL}', { prompt: 'a fox', aspect_ratio: '1:1', resolution: '1K' }, { wait: 60 });`,
      'console.log(job.status, job.result.urls.length);',
    ].join('\n');
    const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer, env: cleanEnv({ URL: server.url, TOKEN: server.token }) });
    expect(stdout).toBe('completed 1\n');
  });
});
