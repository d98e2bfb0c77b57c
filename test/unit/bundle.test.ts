import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageJson, packageRoot } from '../../src/lib/package-root.js';

const ROOT = packageRoot();
const BIN = join(ROOT, 'dist', 'bin');

function bundleFiles(): string[] {
  const chunks = readdirSync(join(BIN, 'chunks')).filter((f) => f.endsWith('.js')).map((f) => join(BIN, 'chunks', f));
  return [join(BIN, 'main.js'), ...chunks];
}

describe('the bundled binary (scripts/bundle.mjs)', () => {
  it('is what dist/main.js runs', () => {
    const entry = readFileSync(join(ROOT, 'dist', 'main.js'), 'utf8');
    expect(entry.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(entry).toContain("import './bin/main.js';");
  });

  it('compiles the many-file packages in and imports the others from node_modules', () => {
    const imports = new Set<string>();
    for (const file of bundleFiles()) {
      // esbuild writes each static import on its own line, and a dynamic one as import("x");
      // comments the packages carry (`from 'kysely'` in a usage example) start with ' * '.
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/^import\s[^;]*?["']([^"'./][^"']*)["'];/gm)) imports.add(m[1]!);
      for (const m of text.matchAll(/[^.\w]import\(["']([^"'./][^"']*)["']\)/g)) imports.add(m[1]!);
    }
    for (const inlined of ['kysely', '@sinclair/typebox', 'zod', 'ajv', 'commander']) {
      expect([...imports].filter((i) => i === inlined || i.startsWith(`${inlined}/`))).toEqual([]);
    }
    // Native or file-relative packages stay where their files are.
    expect(imports).toContain('better-sqlite3');
    expect(imports).toContain('sharp');
  });
});

describe('packageRoot', () => {
  it("finds mediagen's package.json from the source tree", () => {
    expect((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name).toBe('mediagen');
    expect(packageJson()).toEqual(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')));
  });
});
