import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommandEngine } from '../../src/engines/command/command-engine.js';
import { readCommandSettings } from '../../src/config/command-settings.js';
import { systemClock } from '../../src/lib/clock.js';
import { captureLog, commandContext, pngSize } from './command-fixtures.js';
import { TempDirs } from './engine-harness.js';

/** docs/engines.md's "model server in 30 lines of Python", as printed, served by the command engine. */

const dirs = new TempDirs();
let engine: CommandEngine | undefined;

afterEach(async () => {
  await engine?.close();
  await dirs.cleanup();
});

async function docsServer(): Promise<string> {
  const doc = await readFile(resolve(__dirname, '../../docs/engines.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Writing a model server in 30 lines of Python'));
  const code = /```python\n([\s\S]*?)```/.exec(section)![1]!;
  expect(code.trimEnd().split('\n').length).toBeLessThanOrEqual(40);
  return code;
}

describe('docs/engines.md: the 30-line model server', () => {
  it('serves jobs through the command engine as the docs say: progress, then a PNG of the asked size', async () => {
    const dir = await dirs.make();
    await writeFile(join(dir, 'serve.py'), await docsServer());
    const [settings] = readCommandSettings({ painter: { argv: ['python3', 'serve.py'] } }, join(dir, 'mediagen.json'), dir);
    const model = 'image/acme/painter-v1';
    engine = new CommandEngine({ settings: settings!, models: new Map([[model, { schema: undefined, outputTypes: ['image/png'] }]]), clock: systemClock, log: captureLog() });
    for (const [width, height] of [
      [40, 30],
      [7, 9],
    ]) {
      const ctx = commandContext(await dirs.make());
      const [out] = await engine.run({ id: `p${width}`, model, request: { width, height } }, ctx);
      expect(pngSize(await readFile(join(ctx.outDir, out!.name)))).toEqual({ width, height });
      expect(ctx.fractions).toEqual([0.25, 0.5, 0.75, 1]);
      expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
    }
  });
});
