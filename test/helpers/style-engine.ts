import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Engine, EngineContext, EngineJob, OutputFile, StyleArtifact } from '../../src/engines/engine.js';

/**
 * A test-only engine for the style API (the local engine's training renderer is another helper's):
 * a `loraTraining` run reads every training image and stores their mean colour as the artifact,
 * with a cover of that colour; any other job loads each `styles[].id` through `ctx.loadStyle` and
 * paints its output in the first style's colour (grey without one), so a test can read the effect.
 */
export class StyleTestEngine implements Engine {
  readonly name = 'style-test';
  /** The artifacts each styled job loaded, by job id. */
  readonly loaded = new Map<string, Record<string, StyleArtifact>>();
  /** Replaces the style file's text (a broken artifact), when set. */
  styleText: string | undefined;
  /** Reports this many style files (a broken engine), when set. */
  styleFiles = 1;

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    await ctx.stage('processing');
    if (job.model === 'loraTraining') return this.#train(job, ctx);
    const artifacts: Record<string, StyleArtifact> = {};
    for (const s of (job.request.styles ?? []) as { id: string }[]) artifacts[s.id] = await ctx.loadStyle(s.id);
    this.loaded.set(job.id, artifacts);
    await ctx.stage('sampling');
    const first = Object.values(artifacts)[0];
    const [r, g, b] = (first?.mean as number[] | undefined) ?? [128, 128, 128];
    await solid(r!, g!, b!).toFile(join(ctx.outDir, 'output.png'));
    return [{ name: 'output.png', contentType: 'image/png' }];
  }

  async #train(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    const urls = job.request.urls as string[];
    const sums = [0, 0, 0];
    for (const [i, url] of urls.entries()) {
      const { channels } = await sharp(await ctx.loadInput(url, `urls[${i}]`)).stats();
      for (let c = 0; c < 3; c++) sums[c]! += channels[c]!.mean;
    }
    const mean = sums.map((s) => Math.round(s / urls.length));
    await ctx.stage('sampling');
    await solid(mean[0]!, mean[1]!, mean[2]!).toFile(join(ctx.outDir, 'cover.png'));
    const files: OutputFile[] = [{ name: 'cover.png', contentType: 'image/png' }];
    for (let n = 0; n < this.styleFiles; n++) {
      const name = n === 0 ? 'style.json' : `style-${n}.json`;
      await writeFile(join(ctx.outDir, name), this.styleText ?? JSON.stringify({ mean, images: urls.length, model: job.request.model }));
      files.push({ name, contentType: 'application/json', role: 'style' });
    }
    return files;
  }
}

const solid = (r: number, g: number, b: number) => sharp({ create: { width: 32, height: 32, channels: 3, background: { r, g, b } } }).png();

/** A PNG of one colour, as a base64 data URI (a training image made in the test). */
export async function colourDataUri(r: number, g: number, b: number): Promise<string> {
  return `data:image/png;base64,${(await solid(r, g, b).toBuffer()).toString('base64')}`;
}

/** The mean colour of an image. */
export async function meanColour(bytes: Buffer): Promise<number[]> {
  const { channels } = await sharp(bytes).stats();
  return channels.slice(0, 3).map((c) => Math.round(c.mean));
}
