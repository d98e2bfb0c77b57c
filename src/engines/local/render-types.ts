import type { EngineContext, OutputFile } from '../engine.js';
import type { MediaLimits } from '../media/media-limits.js';
import type { Request } from './request-fields.js';

/** What a model's renderer is given besides the request. */
export interface RenderEnv {
  readonly ctx: EngineContext;
  /** Scratch space for intermediate files, removed when the run ends. */
  readonly workDir: string;
  /** The ffmpeg binary, located on first use so image models never look for it. */
  ffmpeg(): Promise<string>;
  /** The ffprobe binary, located on first use. */
  ffprobe(): Promise<string>;
  /** What an input may claim and cost to decode. */
  readonly limits: MediaLimits;
}

export interface Rendered {
  /** Final files in `ctx.outDir`, the main output first. */
  readonly outputs: readonly OutputFile[];
  /** A small image in `ctx.outDir`, reported with `intermediate-complete`. */
  readonly preview: OutputFile;
}

/**
 * A render split at the `processing` stage: preparing loads and checks every input (so a bad
 * input fails before the job reports `processing`); `render` makes the files.
 */
export interface Prepared {
  render(): Promise<Rendered>;
}

export type ModelRenderer = (model: string, request: Request, env: RenderEnv) => Promise<Prepared>;
