import { EngineError, MAX_STYLE_ARTIFACT_BYTES } from '../../engine.js';
import type { EngineContext, StyleArtifact } from '../../engine.js';
import type { Request } from '../request-fields.js';
import { num, objects, str } from '../request-fields.js';
import type { PaletteColour } from './style-palette.js';
import { TONE_POINTS } from './style-stats.js';
import type { Texture } from './style-stats.js';

/**
 * The local engine's style artifact (`style.json` of a training run, handed back by
 * `ctx.loadStyle`): a versioned JSON object, opaque to the API. docs/engine.md documents it.
 */

export const STYLE_FORMAT = 'mediagen-style/1';

const MAX_PALETTE = 16;

/** How much each part of a style acts when applied (0..1), set by the training `type`. */
export interface Influence {
  readonly palette: number;
  readonly tone: number;
  readonly colour: number;
  readonly texture: number;
}

/**
 * A `Style` (and `Default`) is its whole look. An `Object` or a `Character` is a subject: its
 * colours say most about it, while the lighting and the grain of the photos it came from are
 * incidental, so those act less.
 */
export const INFLUENCE_BY_TYPE: Readonly<Record<string, Influence>> = Object.freeze({
  Style: { palette: 1, tone: 1, colour: 1, texture: 1 },
  Default: { palette: 1, tone: 1, colour: 1, texture: 1 },
  Object: { palette: 1, tone: 0.5, colour: 0.75, texture: 0.4 },
  Character: { palette: 1, tone: 0.6, colour: 0.8, texture: 0.3 },
});

export interface Style {
  readonly type: string;
  readonly palette: readonly PaletteColour[];
  /** Luminance quantiles at 0, 1/16, ..., 1 (levels 0..255), non-decreasing. */
  readonly tone: readonly number[];
  readonly contrast: number;
  /** Mean chroma, 0..1. */
  readonly saturation: number;
  readonly texture: Texture;
  readonly influence: Influence;
}

export interface TrainingFacts {
  readonly baseModel: string;
  readonly triggerWord: string | undefined;
  readonly images: number;
  readonly steps: number;
  readonly iterations: number;
}

const r4 = (v: number) => Math.round(v * 1e4) / 1e4;

export function toArtifact(style: Style, facts: TrainingFacts): StyleArtifact {
  const artifact = {
    format: STYLE_FORMAT,
    type: style.type,
    base_model: facts.baseModel,
    ...(facts.triggerWord ? { trigger_word: facts.triggerWord.slice(0, 200) } : {}),
    images: facts.images,
    palette: style.palette.map((c) => ({ rgb: [...c.rgb], weight: r4(c.weight) })),
    tone: style.tone.map((v) => r4(v)),
    contrast: r4(style.contrast),
    saturation: r4(style.saturation),
    texture: { detail: r4(style.texture.detail), high_frequency: r4(style.texture.highFrequency), grain: r4(style.texture.grain) },
    influence: { ...style.influence },
    training: { max_train_steps: facts.steps, kmeans_iterations: facts.iterations },
  };
  if (Buffer.byteLength(JSON.stringify(artifact)) > MAX_STYLE_ARTIFACT_BYTES) throw new Error('style artifact over 64 KiB');
  return artifact;
}

class Malformed extends Error {}

function numberIn(v: unknown, key: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw new Malformed(key);
  return v;
}

function field(o: Request, key: string, min: number, max: number): number {
  return numberIn(o[key], key, min, max);
}

function record(v: unknown, key: string): Request {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Malformed(key);
  return v as Request;
}

function list(v: unknown, key: string, min: number, max: number): unknown[] {
  if (!Array.isArray(v) || v.length < min || v.length > max) throw new Malformed(key);
  return v;
}

function parse(a: StyleArtifact): Style {
  if (a.format !== STYLE_FORMAT) throw new Malformed('format');
  const palette = list(a.palette, 'palette', 1, MAX_PALETTE).map((item) => {
    const c = record(item, 'palette');
    const rgb = list(c.rgb, 'rgb', 3, 3).map((v) => numberIn(v, 'rgb', 0, 255));
    return { rgb: rgb as unknown as [number, number, number], weight: field(c, 'weight', 0, 1) };
  });
  const tone = list(a.tone, 'tone', TONE_POINTS, TONE_POINTS).map((v) => numberIn(v, 'tone', 0, 255));
  if (tone.some((v, i) => i > 0 && v < tone[i - 1]!)) throw new Malformed('tone');
  const texture = record(a.texture, 'texture');
  const influence = record(a.influence ?? INFLUENCE_BY_TYPE.Style, 'influence');
  return {
    type: typeof a.type === 'string' ? a.type : 'Style',
    palette,
    tone,
    contrast: field(a, 'contrast', 0, 1),
    saturation: field(a, 'saturation', 0, 1),
    texture: {
      detail: field(texture, 'detail', 0, 255),
      highFrequency: field(texture, 'high_frequency', 0, 1),
      grain: field(texture, 'grain', 0, 255),
    },
    influence: {
      palette: field(influence, 'palette', 0, 1),
      tone: field(influence, 'tone', 0, 1),
      colour: field(influence, 'colour', 0, 1),
      texture: field(influence, 'texture', 0, 1),
    },
  };
}

/** A style to apply and its signed weight (the request's −2..2). */
export interface AppliedStyle {
  readonly style: Style;
  readonly strength: number;
}

/**
 * Every `styles[]` item of a request, loaded and read. A style the store no longer has fails as
 * the context says; one whose artifact this engine cannot read (another engine's, or damaged)
 * fails as `input_invalid` naming the item, its content going only to the log.
 */
export async function loadStyles(ctx: EngineContext, req: Request): Promise<AppliedStyle[]> {
  const applied: AppliedStyle[] = [];
  for (const [i, item] of objects(req, 'styles').entries()) {
    const id = str(item, 'id', '');
    const artifact = await ctx.loadStyle(id);
    try {
      applied.push({ style: parse(artifact), strength: num(item, 'strength', 1) });
    } catch (err) {
      if (!(err instanceof Malformed)) throw err;
      throw new EngineError('input_invalid', `styles[${i}].id names a style whose data this engine cannot apply`, {
        detail: `style ${id}: artifact field '${err.message}' is missing or out of range`,
      });
    }
  }
  return applied;
}
