import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildEngineSet, UpstreamNudges, wireModels } from '../../src/app/engine-set.js';
import { loadConfig } from '../../src/config/config.js';
import { systemClock } from '../../src/lib/clock.js';

/** docs/routing.md's worked example, started as written: loaded, wired, its engines built and routed. */
describe('docs/routing.md worked example', () => {
  it('"own GPUs first, fal on overflow" loads, wires both engines of the chain, and logs the chain once', async () => {
    const doc = readFileSync(join(__dirname, '../../docs/routing.md'), 'utf8');
    const example = doc.slice(doc.indexOf('## Worked example'));
    const json = /```json\n([\s\S]*?)```/.exec(example)![1]!;
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-routing-'));
    try {
      const file = join(dir, 'mediagen.json');
      writeFileSync(file, json);
      const config = loadConfig({ configFile: file, env: { FAL_KEY: 'fal-key-id:0123456789abcdef0123' } });
      const wiring = wireModels(config);
      expect(wiring.bindings.chain('image/acme/sdxl')).toEqual({ engines: ['comfyui:gpu', 'provider:fal'], spillAfterMs: 15000 });
      const lines: string[] = [];
      const log = { info: (_o: object, msg: string) => void lines.push(msg), warn: () => undefined, error: () => undefined };
      const set = await buildEngineSet(config, wiring, { clock: systemClock, nudges: new UpstreamNudges(), log });
      try {
        expect(set.router.engineFor('image/acme/sdxl')?.name).toBe('comfyui:gpu');
        expect([...set.router.states().keys()]).toEqual(expect.arrayContaining(['comfyui:gpu', 'provider:fal']));
        expect(lines.filter((l) => l.startsWith('routing:'))).toEqual(["routing: model_engines -> comfyui:gpu -> provider:fal"]);
      } finally {
        await set.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
