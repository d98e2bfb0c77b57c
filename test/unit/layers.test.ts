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

/**
 * The rooms of src/services/, highest first (docs/architecture.md): a room imports its own files
 * and rooms of a lower rank only, never a sibling of its rank, so no two rooms lean on each other.
 * services.ts, which composes them, stands above all.
 */
const SERVICE_ROOMS: readonly (readonly string[])[] = [
  ['upkeep', 'openai'],
  ['node-apps', 'remote'],
  ['jobs'],
  ['catalog', 'assets', 'styles', 'webhooks'],
  ['billing'],
  ['identity', 'common'],
];

/** File names that are a role of their own in any folder: a folder's index. */
const SHARED_NAMES = new Set(['index.ts']);

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

const SERVICES = join(SRC, 'services');

function roomOf(file: string): string | undefined {
  const parts = relative(SERVICES, file).split('/');
  return parts.length > 1 && !parts[0]!.startsWith('..') ? parts[0] : undefined;
}

function roomRank(room: string, file: string): number {
  const rank = SERVICE_ROOMS.findIndex((names) => names.includes(room));
  if (rank < 0) throw new Error(`${relative(SRC, file)} is in no room of test/unit/layers.test.ts`);
  return rank;
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

  it('no engine folder imports another: what engines share is a kit (engines/upstream/, engines/media/) or the port', () => {
    const ENGINES = join(SRC, 'engines');
    const folderOf = (file: string): string | undefined => {
      const parts = relative(ENGINES, file).split('/');
      return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined;
    };
    const KITS = new Set(['upstream', 'media']);
    const folders = new Set(files.map(folderOf).filter((f): f is string => f !== undefined && !KITS.has(f)));
    // The engine kinds this rule is about: a new kind's folder is checked as soon as it exists.
    expect([...folders]).toEqual(expect.arrayContaining(['local', 'providers', 'comfyui', 'command']));
    const foreign: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      if (from === undefined) continue;
      for (const target of importsOf(file)) {
        const to = folderOf(target);
        if (to !== undefined && to !== from && folders.has(to)) foreign.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(foreign).toEqual([]);
  });

  it('a room of services/ imports only rooms ranked below it', () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = roomOf(file);
      if (from === undefined) continue;
      for (const target of importsOf(file)) {
        const to = roomOf(target);
        if (to === undefined || to === from) continue;
        if (roomRank(to, target) <= roomRank(from, file)) wrong.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("no two source files share a name (a folder's index.ts aside)", () => {
    const byName = new Map<string, string[]>();
    for (const file of files) {
      const name = file.split('/').pop()!;
      if (!SHARED_NAMES.has(name)) byName.set(name, [...(byName.get(name) ?? []), relative(SRC, file)]);
    }
    expect([...byName.values()].filter((paths) => paths.length > 1)).toEqual([]);
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
