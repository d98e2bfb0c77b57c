import { readFileSync } from 'node:fs';

/**
 * The package's version, read from package.json at run time: from dist/cli/ and src/cli/ alike it
 * is two directories up. (Importing the JSON would put package.json under the build's rootDir.)
 */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}
