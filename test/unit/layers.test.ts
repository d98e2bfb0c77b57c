import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layers of docs/architecture.md, highest first. A file may import its own layer and any
 * layer below it, never one above; the import graph has no cycle; no source file outgrows what
 * one reader holds in mind.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['main.ts', 'cli'],
  ['app'],
  // metrics/: the Prometheus adapter of the services' Meter and the HTTP app's RequestMeter.
  ['http', 'mcp', 'metrics'],
  ['worker'],
  ['services'],
  ['engines'],
  ['models'],
  ['store', 'outputs'],
  // The config reads money amounts (prices) and dates; nothing below it reads the config.
  ['config'],
  ['domain'],
  ['lib'],
  // The typed client (`mediagen/client`) imports nothing outside itself (test/client/browser-safe.test.ts).
  ['client'],
];
const MAX_LINES = 320;

const SRC = resolve(__dirname, '../../src');

/** Generated code (the client's types from the OpenAPI document) is not written by a reader. */
const GENERATED = 'generated';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === GENERATED) return [];
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC);

function layerOf(file: string): number {
  const top = relative(SRC, file).split('/')[0]!;
  const rank = LAYERS.findIndex((names) => names.includes(top));
  if (rank < 0) throw new Error(`${relative(SRC, file)} is in no layer of test/unit/layers.test.ts`);
  return rank;
}

/** Relative imports of a file (static, dynamic and type-only), resolved to source paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specs.map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts'));
}

describe('source layout', () => {
  it('imports point down the layers only', () => {
    const upward: string[] = [];
    for (const file of files) {
      for (const target of importsOf(file)) {
        if (!target.startsWith(SRC)) continue;
        if (layerOf(target) < layerOf(file)) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('the import graph has no cycle', () => {
    const graph = new Map(files.map((f) => [f, importsOf(f).filter((t) => files.includes(t))]));
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file)!) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it(`no source file is longer than ${MAX_LINES} lines`, () => {
    const long = files
      .map((f) => ({ file: relative(SRC, f), lines: readFileSync(f, 'utf8').split('\n').length }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
