import { packageJson } from '../lib/package-root.js';

/**
 * The package's version, from package.json at run time. (Importing the JSON would put
 * package.json under the build's rootDir.)
 */
export function packageVersion(): string {
  const { version } = packageJson();
  return typeof version === 'string' ? version : 'unknown';
}
