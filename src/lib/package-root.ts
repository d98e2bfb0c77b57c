import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PackageJson {
  readonly name?: unknown;
  readonly version?: unknown;
}

let found: { readonly root: string; readonly json: PackageJson } | undefined;

/**
 * mediagen's package.json and its directory, found by walking up from this module: the code runs
 * from src/ (the tests), from tsc's dist/ tree and from the bundled binary's dist/bin/ chunks, each
 * a different depth below it, so no fixed `../..` holds for all three. Read once.
 */
function ours(): { readonly root: string; readonly json: PackageJson } {
  if (found !== undefined) return found;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const json = read(join(dir, 'package.json'));
    if (json?.name === 'mediagen') return (found = { root: dir, json });
    if (dirname(dir) === dir) throw new Error("mediagen's package.json was not found above its code");
  }
}

function read(file: string): PackageJson | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
}

/** The directory of mediagen's package.json. */
export const packageRoot = (): string => ours().root;

/** mediagen's package.json, as read when its directory was found. */
export const packageJson = (): PackageJson => ours().json;
