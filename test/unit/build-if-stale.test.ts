import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script, without types.
import { staleness } from '../../scripts/build-if-stale.mjs';

const stale = staleness as (root: string) => string | undefined;

/** `npm start`'s prestart: when the full build runs again. */
describe('build-if-stale', () => {
  let root: string;
  const at = (path: string, seconds: number) => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '');
    utimesSync(file, seconds, seconds);
    for (let dir = dirname(file); dir.startsWith(root) && dir !== root; dir = dirname(dir)) utimesSync(dir, 1000, 1000);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mediagen-stale-'));
    for (const f of ['src/main.ts', 'packages/client/src/generated/openapi.ts', 'scripts/client-types.ts', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.client.json']) at(f, 1000);
    at('dist/main.js', 2000);
    at('packages/client/dist/index.js', 2000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('does nothing when dist is newer than every source', () => {
    expect(stale(root)).toBeUndefined();
  });

  it('builds when the client package has no build, however new dist is', () => {
    rmSync(join(root, 'packages/client/dist/index.js'));
    expect(stale(root)).toBe('packages/client/dist is missing');
  });

  it('builds when the generated client types are missing, however new dist is', () => {
    rmSync(join(root, 'packages/client/src/generated/openapi.ts'));
    utimesSync(join(root, 'packages/client/src/generated'), 1000, 1000);
    expect(stale(root)).toBe('packages/client/src/generated/openapi.ts is missing');
  });

  it('builds when dist is missing, or older than src, scripts, package.json or a tsconfig', () => {
    for (const f of ['src/services/x.ts', 'scripts/client-types.ts', 'package.json', 'tsconfig.client.json']) {
      at(f, 3000);
      expect(stale(root)).toBe(`${f.split('/')[0]} changed since the last build`);
      at(f, 1000);
    }
    // The client package's source: the server's binary runs its client commands from its build.
    at('packages/client/src/cli/generate.ts', 3000);
    expect(stale(root)).toBe('packages/client/src changed since the last build');
    at('packages/client/src/cli/generate.ts', 1000);
    rmSync(join(root, 'dist'), { recursive: true });
    expect(stale(root)).toBe('dist/main.js is missing');
  });

  it("builds when the web console's sources changed (dist/console is built with the rest)", () => {
    at('console/src/app.tsx', 1000);
    expect(stale(root)).toBeUndefined();
    at('console/src/app.tsx', 3000);
    expect(stale(root)).toBe('console changed since the last build');
  });
});
