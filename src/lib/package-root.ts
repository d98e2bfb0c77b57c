import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The directory of mediagen's package.json, found by walking up from this module: the code runs
 * from src/ (the tests), from tsc's dist/ tree and from the bundled binary's dist/bin/ chunks, each
 * a different depth below it, so no fixed `../..` holds for all three.
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (isOurs(join(dir, 'package.json'))) return (root = dir);
    if (dirname(dir) === dir) throw new Error("mediagen's package.json was not found above its code");
  }
}

function isOurs(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'mediagen';
  } catch {
    return false;
  }
}
