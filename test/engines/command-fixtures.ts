import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EngineError } from '../../src/engines/engine.js';
import type { EngineContext, EngineStage, OutputFile } from '../../src/engines/engine.js';
import { CommandEngine } from '../../src/engines/command/command-engine.js';
import type { CommandModel } from '../../src/engines/command/command-engine.js';
import { readCommandSettings } from '../../src/config/command-settings.js';
import { systemClock } from '../../src/lib/clock.js';
import type { Clock } from '../../src/lib/clock.js';
import type { Log } from '../../src/lib/log.js';

/** A context for running the command engine directly (after test/engines/engine-harness.ts's fakeContext), and a capturing log. */

export const FIXTURES = resolve(__dirname, 'fixtures');

export interface Recorded {
  readonly stage: EngineStage;
  readonly preview?: OutputFile;
  /** The preview's first bytes when its stage was reported. */
  readonly previewHead?: Buffer;
}

export interface CommandContext extends EngineContext {
  readonly stages: Recorded[];
  readonly fractions: number[];
  readonly loaded: string[];
  readonly controller: AbortController;
}

export function commandContext(outDir: string, opts: { deadlineMs?: number; onProgress?: (f: number) => void } = {}): CommandContext {
  const controller = new AbortController();
  const stages: Recorded[] = [];
  const fractions: number[] = [];
  const loaded: string[] = [];
  return {
    signal: controller.signal,
    outDir,
    controller,
    stages,
    fractions,
    loaded,
    deadlineMs: opts.deadlineMs ?? Date.now() + 3_600_000,
    progress: (f) => {
      fractions.push(f);
      opts.onProgress?.(f);
    },
    upstream: { load: async () => undefined, save: async () => undefined },
    async loadInput(url: string, field: string) {
      loaded.push(field);
      const data = /^data:[^;,]*;base64,(.*)$/.exec(url);
      if (data) return Buffer.from(data[1]!, 'base64');
      throw new EngineError('input_fetch_failed', `${field}: cannot fetch ${url}`);
    },
    async loadStyle(id: string) {
      throw new EngineError('input_invalid', `style '${id}' not found`);
    },
    async stage(stage: EngineStage, preview?: OutputFile) {
      controller.signal.throwIfAborted();
      const previewHead = preview ? (await readFile(join(outDir, preview.name))).subarray(0, 8) : undefined;
      stages.push({ stage, ...(preview ? { preview, previewHead } : {}) });
    },
  };
}

export interface LogLine {
  readonly level: 'info' | 'warn' | 'error';
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

export function captureLog(): Log & { readonly lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (obj: object, msg: string) => void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** A command engine as the config file would declare it (`commands.<name>`, relative to fixtures/). */
export function commandEngine(block: Record<string, unknown>, models: Record<string, CommandModel>, log: Log, clock: Clock = systemClock): CommandEngine {
  const [settings] = readCommandSettings({ test: block }, 'mediagen.json', FIXTURES);
  return new CommandEngine({ settings: settings!, models: new Map(Object.entries(models)), clock, log });
}

/** A PNG's width and height, read from its IHDR. */
export function pngSize(bytes: Buffer): { width: number; height: number } {
  if (bytes.subarray(0, 8).toString('latin1') !== '\x89PNG\r\n\x1a\n' || bytes.subarray(12, 16).toString('latin1') !== 'IHDR') throw new Error('not a PNG');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}
