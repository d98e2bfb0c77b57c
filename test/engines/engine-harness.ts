import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { EngineError } from '../../src/engines/engine.js';
import type { EngineContext, EngineStage, OutputFile, StyleArtifact } from '../../src/engines/engine.js';
import { locateFfmpeg, runFfmpeg } from '../../src/engines/media/ffmpeg.js';
import type { LocalEngine } from '../../src/engines/local/local-engine.js';

/** A fake EngineContext and pixel helpers shared by the engine tests. */

export interface StageRecord {
  readonly stage: EngineStage;
  readonly preview?: OutputFile;
  /** Whether the preview file existed when the stage was reported. */
  readonly previewExisted?: boolean;
}

export interface FakeContext extends EngineContext {
  readonly stages: StageRecord[];
  readonly loaded: string[];
  readonly controller: AbortController;
}

/**
 * `inputs` serves URLs by name; `data:` URIs are decoded here, as the real context does. Anything
 * else fails as the real fetcher would.
 */
export function fakeContext(
  outDir: string,
  inputs: Readonly<Record<string, Buffer>> = {},
  onStage?: (stage: EngineStage) => Promise<void> | void,
  styles: Readonly<Record<string, StyleArtifact>> = {},
): FakeContext {
  const controller = new AbortController();
  const stages: StageRecord[] = [];
  const loaded: string[] = [];
  return {
    signal: controller.signal,
    outDir,
    controller,
    stages,
    loaded,
    deadlineMs: Date.now() + 3_600_000,
    progress: () => undefined,
    upstream: { load: async () => undefined, save: async () => undefined },
    async loadInput(url: string, field: string) {
      loaded.push(field);
      const data = /^data:[^;,]*;base64,(.*)$/.exec(url);
      if (data) return Buffer.from(data[1]!, 'base64');
      const served = inputs[url];
      if (!served) throw new EngineError('input_fetch_failed', `${field}: cannot fetch ${url}`);
      return served;
    },
    async loadStyle(id: string) {
      const style = styles[id];
      if (!style) throw new EngineError('input_invalid', `style '${id}' not found`);
      return style;
    },
    async stage(stage: EngineStage, preview?: OutputFile) {
      const previewExisted = preview ? await exists(join(outDir, preview.name)) : undefined;
      stages.push({ stage, ...(preview ? { preview, previewExisted } : {}) });
      await onStage?.(stage);
    },
  };
}

async function exists(path: string): Promise<boolean> {
  return readFile(path).then(
    () => true,
    () => false,
  );
}

/** A temporary directory per run; `cleanup` removes them all. */
export class TempDirs {
  readonly #dirs: string[] = [];
  async make(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'mediagen-engine-'));
    this.#dirs.push(dir);
    return dir;
  }
  async cleanup(): Promise<void> {
    await Promise.all(this.#dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  }
}

export interface RunResult {
  readonly outputs: OutputFile[];
  readonly ctx: FakeContext;
  /** The main output's bytes. */
  readonly bytes: Buffer;
  readonly path: string;
}

export async function runJob(
  engine: LocalEngine,
  dirs: TempDirs,
  model: string,
  request: Record<string, unknown>,
  inputs: Readonly<Record<string, Buffer>> = {},
): Promise<RunResult> {
  const ctx = fakeContext(await dirs.make(), inputs);
  const outputs = await engine.run({ id: 'job-1', model, request }, ctx);
  const path = join(ctx.outDir, outputs[0]!.name);
  return { outputs, ctx, bytes: await readFile(path), path };
}

export interface Pixels {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
}

/** Any image file or buffer as 8-bit RGB, optionally resized (to compare different sizes). */
export async function rgb(input: Buffer | string, size?: { width: number; height: number }): Promise<Pixels> {
  let img = sharp(input).removeAlpha().toColourspace('srgb');
  if (size) img = img.resize(size.width, size.height, { fit: 'fill' });
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

export function meanColour(p: Pixels): [number, number, number] {
  const sum = [0, 0, 0];
  for (let i = 0; i < p.data.length; i++) sum[i % 3]! += p.data[i]!;
  const n = p.data.length / 3;
  return [sum[0]! / n, sum[1]! / n, sum[2]! / n];
}

/** Mean absolute difference per channel value, 0..255. */
export function meanAbsDiff(a: Pixels, b: Pixels): number {
  if (a.data.length !== b.data.length) throw new Error('meanAbsDiff: sizes differ');
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i]! - b.data[i]!);
  return sum / a.data.length;
}

export function colourDistance(a: readonly number[], b: readonly number[]): number {
  return Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);
}

/** One decoded frame of a video file, by index. */
export async function videoFrame(video: string, index: number, dirs: TempDirs): Promise<Pixels> {
  const out = join(await dirs.make(), 'frame.png');
  await runFfmpeg(['-i', video, '-vf', `select=eq(n\\,${index})`, '-frames:v', '1', out], {
    signal: new AbortController().signal,
    ffmpegPath: await locateFfmpeg(),
  });
  return rgb(out);
}

export function solidPng(width: number, height: number, colour: string): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer();
}

export function dataUri(bytes: Buffer, type = 'image/png'): string {
  return `data:${type};base64,${bytes.toString('base64')}`;
}
