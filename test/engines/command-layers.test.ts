import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The command engine's folder imports no other engine folder (docs/architecture.md, "Layers"):
 * what it shares with the engines that hold work elsewhere comes from engines/upstream/, media
 * inspection from engines/media/, the port from engines/engine.ts.
 */

const ENGINES = resolve(__dirname, '../../src/engines');
const COMMAND = join(ENGINES, 'command');
/** The kits every engine may use; every other folder of engines/ is an engine of its own. */
const KITS = new Set(['command', 'upstream', 'media']);

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) => resolve(dirname(file), m[1]!));
}

describe('command engine: its imports', () => {
  it('imports nothing from another engine folder (providers/, comfyui/, local/ …)', () => {
    const files = readdirSync(COMMAND).filter((n) => n.endsWith('.ts'));
    expect(files).toContain('command-engine.ts');
    const foreign = files.flatMap((name) =>
      importsOf(join(COMMAND, name))
        .map((target) => relative(ENGINES, target).split('/'))
        .filter((parts) => parts.length > 1 && parts[0] !== '..' && !KITS.has(parts[0]!))
        .map((parts) => `${name} -> engines/${parts.join('/')}`),
    );
    expect(foreign).toEqual([]);
  });
});
