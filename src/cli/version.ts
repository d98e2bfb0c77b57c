import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../lib/package-root.js';

/**
 * The package's version, read from package.json at run time. (Importing the JSON would put
 * package.json under the build's rootDir.)
 */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}
