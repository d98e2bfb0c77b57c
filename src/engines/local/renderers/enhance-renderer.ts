import { join } from 'node:path';
import sharp from 'sharp';
import type { Sharp } from 'sharp';
import type { EngineContext, OutputFile, UpstreamState } from '../../engine.js';
import type { EnhanceOutputFormat } from '../../../models/image/enhance-fields.js';
import { addGrain, deblock } from '../image/enhance-filters.js';
import { loadImageRaw } from '../image/image-inputs.js';
import { neuralUpscale, planNeural, upscalerName } from '../image/neural-upscale.js';
import type { UpscalePlan } from '../image/neural-upscale.js';
import { mix } from '../image/pixels.js';
import type { RawImage } from '../image/pixels.js';
import { writeImagePreview } from '../preview.js';
import type { ModelRenderer } from '../render-types.js';
import { bool, num, str } from '../request-fields.js';
import type { Request } from '../request-fields.js';
import { Prng, sceneKey, sha256 } from '../seed.js';

/**
 * enhance/vendor-j/standard-enhance and generative-enhance: the input image, its compression
 * blocks repaired and its noise removed at its own size (where the blocks and the noise are),
 * enlarged by ESRGAN when it is drawn larger (image/neural-upscale.ts), resized to exactly
 * width x height with lanczos3 (cropped to fill, or fitted whole with black bars), sharpened, and written as png, jpg or webp. generative-enhance then grades the colours by
 * its prompt (white balance and saturation) and lays a seeded film grain, both as strong as `creativity`. Fields absent from the
 * request take the chosen `model`'s own setting (PRESETS). docs/engine.md describes the result.
 */

interface Preset {
  readonly sharpen: number;
  readonly denoise: number;
  readonly fix_compression: number;
  /** Generative models: grain and grade at creativity 6; 0 for the standard models. */
  readonly invention: number;
}

/** What each model does when the request leaves a filter out: the vendor's "auto" per model. */
const PRESETS: Readonly<Record<string, Preset>> = {
  'Standard V2': { sharpen: 0.3, denoise: 0.2, fix_compression: 0.3, invention: 0 },
  'Low Resolution V2': { sharpen: 0.45, denoise: 0.1, fix_compression: 0.6, invention: 0 },
  CGI: { sharpen: 0.35, denoise: 0.1, fix_compression: 0, invention: 0 },
  'High Fidelity V2': { sharpen: 0.15, denoise: 0.05, fix_compression: 0.1, invention: 0 },
  'Text Refine': { sharpen: 0.7, denoise: 0.1, fix_compression: 0.4, invention: 0 },
  Redefine: { sharpen: 0.3, denoise: 0.3, fix_compression: 0.4, invention: 1 },
  Recovery: { sharpen: 0.4, denoise: 0.5, fix_compression: 0.6, invention: 0.5 },
  'Recovery V2': { sharpen: 0.35, denoise: 0.6, fix_compression: 0.7, invention: 0.5 },
};

const OUTPUTS: Readonly<Record<EnhanceOutputFormat, OutputFile>> = {
  png: Object.freeze({ name: 'output.png', contentType: 'image/png' }),
  jpg: Object.freeze({ name: 'output.jpg', contentType: 'image/jpeg' }),
  webp: Object.freeze({ name: 'output.webp', contentType: 'image/webp' }),
};

/** Standard deviation of the grain in mid-grey at creativity 6, in 8-bit levels. */
const MAX_GRAIN = 12;
/** Largest channel gain change of the prompt's white balance at creativity 6. */
const MAX_BALANCE = 0.12;

export interface EnhanceSettings {
  readonly width: number;
  readonly height: number;
  readonly crop: boolean;
  readonly format: EnhanceOutputFormat;
  /** Each 0..1, already scaled by `strength`. */
  readonly sharpen: number;
  readonly denoise: number;
  readonly fixCompression: number;
  /** 0..1: creativity / 6 times the model's invention; 0 for standard-enhance. */
  readonly invention: number;
}

const unit = (v: number) => Math.min(1, Math.max(0, v));

export function enhanceSettings(req: Request): EnhanceSettings {
  const preset = PRESETS[str(req, 'model', 'Standard V2')] ?? PRESETS['Standard V2']!;
  const strength = unit(num(req, 'strength', 1));
  const format = str(req, 'output_format', 'jpg');
  const side = (key: string) => Math.min(32000, Math.max(1, Math.round(num(req, key, 1024))));
  return {
    width: side('width'),
    height: side('height'),
    crop: bool(req, 'crop_to_fill', false),
    format: format in OUTPUTS ? (format as EnhanceOutputFormat) : 'jpg',
    sharpen: unit(num(req, 'sharpen', preset.sharpen)) * strength,
    denoise: unit(num(req, 'denoise', preset.denoise)) * strength,
    fixCompression: unit(num(req, 'fix_compression', preset.fix_compression)) * strength,
    invention: preset.invention * (preset.invention > 0 ? unit(num(req, 'creativity', 3) / 6) : 0),
  };
}

const fromRaw = (img: RawImage): Sharp => sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 }, limitInputPixels: false });

async function toRaw(pipeline: Sharp): Promise<RawImage> {
  const { data, info } = await pipeline.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/**
 * Noise removal: a median (edge-preserving: it keeps steps that a blur would smear) blended over
 * the image by `amount`; a 5 x 5 window above one half, 3 x 3 below.
 */
async function denoise(img: RawImage, amount: number): Promise<RawImage> {
  if (amount <= 0) return img;
  return mix(img, await toRaw(fromRaw(img).median(amount > 0.5 ? 5 : 3)), amount);
}

/**
 * The picture enlarged by the network (ESRGAN) when it is drawn larger than it is and the plan
 * fits the size limit and the deadline (image/neural-upscale.ts); unchanged otherwise. Which
 * upscaler ran, and why lanczos3 alone when it did, is stored with the job (upscalerState) for
 * its details, before the work, so a run that fails or is cancelled midway says it too.
 */
async function neural(img: RawImage, s: EnhanceSettings, ctx: EngineContext): Promise<RawImage> {
  const [fx, fy] = [s.width / img.width, s.height / img.height];
  const plan = planNeural(img, s.width, s.height, s.crop ? Math.max(fx, fy) : Math.min(fx, fy), (ctx.deadlineMs - Date.now()) / 1000);
  await ctx.upstream.save(upscalerState(plan));
  // The network is nearly all of such a render: its tiles are the job's progress, up to 0.9.
  return plan.upscaler === 'network' ? neuralUpscale(img, plan, ctx.signal, (done) => ctx.progress(0.9 * done)) : img;
}

/**
 * What a job's details show of its upscaler (local-kind.ts reads it back): the built-in engine
 * holds no work elsewhere, but the upstream record is where an engine keeps what a job's details
 * show of its run.
 */
export function upscalerState(plan: UpscalePlan): UpstreamState {
  const state = plan.upscaler === 'network' ? { upscaler: `esrgan-${plan.network}`, scale: plan.scale } : { upscaler: 'lanczos3', reason: plan.reason };
  return { engine: 'local', id: upscalerName(plan), state };
}

/** The exact output size; sharpening after the resize, so it works at the scale the client sees. */
function resized(img: RawImage, s: EnhanceSettings): Sharp {
  const pipeline = fromRaw(img).resize(s.width, s.height, {
    kernel: 'lanczos3',
    fit: s.crop ? 'cover' : 'contain',
    position: 'centre',
    background: { r: 0, g: 0, b: 0, alpha: 1 },
  });
  if (s.sharpen <= 0) return pipeline;
  const a = s.sharpen;
  return pipeline.sharpen({ sigma: 0.5 + 1.5 * a, m1: 0.5 + 1.5 * a, m2: 1 + 5 * a });
}

/**
 * The prompt's colour grade: a white balance (warm-cool and green-magenta channel gains) and a
 * saturation its words pick, scaled by `invention`.
 */
export function promptGrade(prompt: string, invention: number): { gains: [number, number, number]; saturation: number } {
  const digest = sha256('enhance-grade', prompt.trim().toLowerCase());
  const spread = (offset: number) => (digest.readUInt16BE(offset) / 0xffff) * 2 - 1;
  const [warmth, tint] = [spread(0) * MAX_BALANCE * invention, spread(2) * MAX_BALANCE * invention];
  const saturation = 1 + 0.25 * invention * (digest.readUInt16BE(4) / 0xffff);
  return { gains: [1 + warmth, 1 + tint, 1 - warmth], saturation };
}

async function encode(img: RawImage, format: EnhanceOutputFormat, path: string): Promise<void> {
  const out = fromRaw(img);
  const encoder = format === 'png' ? out.png() : format === 'webp' ? out.webp({ quality: 90 }) : out.jpeg({ quality: 92 });
  await encoder.toFile(path);
}

export const renderEnhance: ModelRenderer = async (model, req, env) => {
  const s = enhanceSettings(req);
  const source = await loadImageRaw(env, str(req, 'image_url', ''), 'image_url');
  const { signal, outDir } = env.ctx;

  return {
    async render() {
      // sharp cannot be interrupted mid-operation: the signal is checked between steps, and the
      // pixel loops stop between bands of rows.
      await deblock(source, s.fixCompression, signal);
      const clean = await denoise(source, s.denoise);
      signal.throwIfAborted();
      const big = await neural(clean, s, env.ctx);
      let img = await toRaw(resized(big, s));
      signal.throwIfAborted();
      if (s.invention > 0) {
        const grade = promptGrade(str(req, 'prompt', ''), s.invention);
        img = await toRaw(fromRaw(img).linear(grade.gains, [0, 0, 0]).modulate({ saturation: grade.saturation }));
        signal.throwIfAborted();
        await addGrain(img, MAX_GRAIN * s.invention, new Prng(sceneKey(model, req)).fork('grain'), signal);
      }
      const file = OUTPUTS[s.format];
      await encode(img, s.format, join(outDir, file.name));
      signal.throwIfAborted();
      return { outputs: [file], preview: await writeImagePreview(img, outDir) };
    },
  };
};
