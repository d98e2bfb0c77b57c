// Room services/openai/: OpenAI's Images, Videos and Models APIs over the native jobs (docs/openai.md).
// This module is the ONE rule turning OpenAI's request fields into a model's own body, read from the
// model's request schema alone, so a built-in, custom, ComfyUI, command or provider model maps alike.
import type { TObject } from '@sinclair/typebox';
import { DomainError } from '../../domain/error-catalogue.js';

/** OpenAI's fields this rule maps (the rest of a request, such as `model` and `user`, is read by the use case). */
export interface OpenAiFields {
  readonly prompt?: string;
  /** `WxH` (`1024x1536`) or `auto`. */
  readonly size?: string;
  /** Images wanted (1 to 10): the model's count field where it has one, else that many jobs. */
  readonly n?: number;
  readonly quality?: string;
  readonly output_format?: string;
  readonly output_compression?: number;
  readonly background?: string;
  readonly style?: string;
  /** A video's length (OpenAI sends `"4"`, `"8"`, `"12"`): the model's duration field. */
  readonly seconds?: string | number;
}

/** A model's body from OpenAI's fields, and how many jobs of it answer the request. */
export interface MappedRequest {
  readonly body: Record<string, unknown>;
  readonly jobs: number;
}

/** What the rule reads of a model: its request schema (a catalog entry has it). */
export interface MappableModel {
  readonly path: string;
  readonly request?: TObject;
}

/**
 * A refusal naming OpenAI's parameter: `param` rides in the error's fields, which the /v1 routes
 * show as OpenAI's `error.param` (a native route never meets one).
 */
export function paramError(param: string, message: string): DomainError {
  return new DomainError('invalid_request', message, { fields: { param } });
}

/** The OpenAI parameter a refusal named, or null. */
export function paramOf(err: DomainError): string | null {
  const p = err.details.fields?.param;
  return typeof p === 'string' ? p : null;
}

type Prop = Readonly<Record<string, unknown>>;

/** Names a model's count field goes by; the first the schema has (an integer) counts. */
const COUNT_FIELDS = ['n', 'num_images', 'num_outputs', 'image_count', 'number_of_images'];
/** Names a model's duration field goes by. */
const DURATION_FIELDS = ['duration', 'seconds', 'duration_seconds'];
const RATIO_RE = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/;
/** `1K` (long side 1024 px), `4k`, `720p` (short side 720 px). */
const RESOLUTION_RE = /^(\d+(?:\.\d+)?)([kKpP])$/;
const SIZE_RE = /^([1-9]\d{0,4})x([1-9]\d{0,4})$/;
/** OpenAI's spelling to a model's: a model may say `jpg`. */
const FORMAT_SYNONYMS: Readonly<Record<string, readonly string[]>> = { jpeg: ['jpeg', 'jpg'], png: ['png'], webp: ['webp'] };

/** The values a property allows, unwrapping a nullable union; undefined when it is not an enum. */
export function enumOf(prop: Prop | undefined): readonly unknown[] | undefined {
  if (!prop) return undefined;
  if (Array.isArray(prop.enum)) return prop.enum as unknown[];
  if ('const' in prop) return [prop.const];
  const union = (prop.anyOf ?? prop.oneOf) as Prop[] | undefined;
  if (!Array.isArray(union)) return undefined;
  const values: unknown[] = [];
  for (const member of union) {
    if (member.type === 'null') continue;
    const inner = enumOf(member);
    if (!inner) return undefined;
    values.push(...inner);
  }
  return values.length > 0 ? values : undefined;
}

/** The property's own type (`number`, `string`...), through a nullable union. */
function typeOf(prop: Prop | undefined): string | undefined {
  if (!prop) return undefined;
  if (typeof prop.type === 'string') return prop.type;
  const union = (prop.anyOf ?? prop.oneOf) as Prop[] | undefined;
  return union?.map((m) => typeOf(m)).find((t) => t !== undefined && t !== 'null');
}

function numberBound(prop: Prop | undefined, key: 'minimum' | 'maximum'): number | undefined {
  if (!prop) return undefined;
  if (typeof prop[key] === 'number') return prop[key];
  const union = (prop.anyOf ?? prop.oneOf) as Prop[] | undefined;
  return union?.map((m) => numberBound(m, key)).find((v) => v !== undefined);
}

function propsOf(model: MappableModel): Readonly<Record<string, Prop>> {
  return (model.request?.properties ?? {}) as Record<string, Prop>;
}

const isRequired = (model: MappableModel, field: string) => (model.request?.required ?? []).includes(field);

/** The model's aspect field: a string enum whose every value is `W:H` (`aspect_ratio`, `ratio`...). */
export function aspectField(model: MappableModel): { name: string; values: string[] } | undefined {
  for (const [name, prop] of Object.entries(propsOf(model))) {
    const values = enumOf(prop);
    if (values && values.length > 0 && values.every((v) => typeof v === 'string' && RATIO_RE.test(v))) return { name, values: values as string[] };
  }
  return undefined;
}

/** The model's resolution field: a string enum whose every value is `1K`, `4k`, `720p`... */
export function resolutionField(model: MappableModel): { name: string; values: string[] } | undefined {
  for (const [name, prop] of Object.entries(propsOf(model))) {
    const values = enumOf(prop);
    if (values && values.length > 0 && values.every((v) => typeof v === 'string' && RESOLUTION_RE.test(v))) return { name, values: values as string[] };
  }
  return undefined;
}

/** `WxH` as numbers, or undefined for `auto`; anything else names `size`. */
export function parseSize(size: string | undefined): { width: number; height: number } | undefined {
  if (size === undefined || size === 'auto') return undefined;
  const m = SIZE_RE.exec(size);
  if (!m) throw paramError('size', `size '${size.slice(0, 40)}' is not WxH (such as 1024x1024) or auto`);
  return { width: Number(m[1]), height: Number(m[2]) };
}

const ratioOf = (value: string) => {
  const m = RATIO_RE.exec(value)!;
  return Number(m[1]) / Number(m[2]);
};

/** The enum value nearest `target` on a log scale (so 2:1 and 1:2 are as far from 1:1); ties keep the first. */
function nearest(values: readonly string[], distance: (v: string) => number): string {
  let best = values[0]!;
  let bestD = Infinity;
  for (const v of values) {
    const d = distance(v);
    if (d < bestD - 1e-9) [best, bestD] = [v, d];
  }
  return best;
}

/**
 * The resolution value nearest `width`x`height`: `Np` is compared with the short side, `NK`
 * with the long side (1K = 1024 px).
 */
function nearestResolution(values: readonly string[], width: number, height: number): string {
  return nearest(values, (v) => {
    const m = RESOLUTION_RE.exec(v)!;
    const side = m[2]!.toLowerCase() === 'p' ? Number(m[1]) : Number(m[1]) * 1024;
    return Math.abs(Math.log((m[2]!.toLowerCase() === 'p' ? Math.min(width, height) : Math.max(width, height)) / side));
  });
}

/** Size onto the model: width/height where it has both, else its aspect and resolution enums. */
function mapSize(model: MappableModel, size: string | undefined, body: Record<string, unknown>): void {
  const props = propsOf(model);
  const asked = parseSize(size);
  const numeric = (n: string) => ['number', 'integer'].includes(typeOf(props[n]) ?? '');
  if (numeric('width') && numeric('height')) {
    if (!asked) {
      // auto: the model's defaults, unless it needs a size to run.
      if (isRequired(model, 'width') || isRequired(model, 'height')) throw paramError('size', `${model.path} needs a size; send WxH`);
      return;
    }
    for (const side of ['width', 'height'] as const) {
      const min = numberBound(props[side], 'minimum');
      const max = numberBound(props[side], 'maximum');
      const v = asked[side];
      if ((min !== undefined && v < min) || (max !== undefined && v > max)) {
        throw paramError('size', `size '${size}': ${model.path} takes a ${side} from ${min ?? 1} to ${max ?? 'any'} pixels`);
      }
    }
    body.width = asked.width;
    body.height = asked.height;
    return;
  }
  const aspect = aspectField(model);
  const resolution = resolutionField(model);
  if (!aspect && !resolution) {
    if (asked) throw paramError('size', `${model.path} has no size, aspect ratio or resolution to set; send size auto or leave it out`);
    return;
  }
  // auto: a required field still needs a value; a square of 1024 is OpenAI's own default size.
  const target = asked ?? { width: 1024, height: 1024 };
  if (aspect && (asked || isRequired(model, aspect.name))) {
    const want = target.width / target.height;
    body[aspect.name] = nearest(aspect.values, (v) => Math.abs(Math.log(ratioOf(v) / want)));
  }
  if (resolution && (asked || isRequired(model, resolution.name))) {
    body[resolution.name] = nearestResolution(resolution.values, target.width, target.height);
  }
}

/**
 * An OpenAI value onto the model's field of the same meaning: set when the field allows it; the
 * OpenAI default (`auto`, or absent) costs nothing; any other value is a 400 naming `param`.
 */
function mapChoice(model: MappableModel, param: string, field: string, value: string | undefined, body: Record<string, unknown>, defaults: readonly string[], synonyms: readonly string[] = [value ?? '']): void {
  if (value === undefined) return;
  const prop = propsOf(model)[field];
  const allowed = enumOf(prop);
  if (prop) {
    const hit = allowed ? synonyms.find((s) => allowed.includes(s)) : typeOf(prop) === 'string' ? value : undefined;
    if (hit !== undefined) {
      body[field] = hit;
      return;
    }
    if (defaults.includes(value)) return;
    throw paramError(param, `${param} '${value.slice(0, 40)}' is not one ${model.path} offers${allowed ? `: ${allowed.filter((v) => v !== null).join(', ')}` : ''}`);
  }
  if (defaults.includes(value)) return;
  throw paramError(param, `${model.path} has no ${param} to set; leave ${param} out${defaults.length ? ` or send ${defaults.join(' or ')}` : ''}`);
}

/** Seconds onto the model's duration field: a value it allows, or a 400 naming `seconds`. */
function mapSeconds(model: MappableModel, seconds: string | number | undefined, body: Record<string, unknown>): void {
  if (seconds === undefined) return;
  const n = typeof seconds === 'number' ? seconds : /^\d{1,5}(?:\.\d+)?$/.test(seconds) ? Number(seconds) : NaN;
  if (!Number.isFinite(n) || n <= 0) throw paramError('seconds', `seconds '${String(seconds).slice(0, 20)}' is not a number of seconds`);
  const props = propsOf(model);
  const field = DURATION_FIELDS.find((f) => props[f]);
  if (!field) throw paramError('seconds', `${model.path} has no duration to set; leave seconds out`);
  const prop = props[field];
  const allowed = enumOf(prop);
  if (allowed) {
    const hit = allowed.find((v) => Number(v) === n);
    if (hit === undefined) throw paramError('seconds', `seconds ${n}: ${model.path} makes videos of ${allowed.filter((v) => v !== null).join(', ')} seconds`);
    body[field] = hit;
    return;
  }
  const type = typeOf(prop);
  if (type === 'integer' && !Number.isInteger(n)) throw paramError('seconds', `seconds ${n}: ${model.path} takes whole seconds`);
  const min = numberBound(prop, 'minimum');
  const max = numberBound(prop, 'maximum');
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) throw paramError('seconds', `seconds ${n}: ${model.path} takes ${min ?? 0} to ${max ?? 'any'} seconds`);
  body[field] = type === 'string' ? String(n) : n;
}

/** n onto the model's count field, else n jobs of one image each. */
function mapCount(model: MappableModel, n: number | undefined, body: Record<string, unknown>): number {
  if (n === undefined || n === 1) return 1;
  const props = propsOf(model);
  const field = COUNT_FIELDS.find((f) => typeOf(props[f]) === 'integer');
  if (!field) return n;
  const max = numberBound(props[field], 'maximum');
  if (max !== undefined && n > max) throw paramError('n', `n ${n}: ${model.path} makes at most ${max} per request`);
  body[field] = n;
  return 1;
}

/**
 * The one mapping rule (docs/openai.md): OpenAI's fields to the model's own body, from its schema.
 * `size` to width/height where the model has them, else the nearest aspect and resolution of its
 * enums; `seconds` to its duration; `n` to its count field, else `n` jobs; `quality`,
 * `output_format`, `background`, `style` and `output_compression` to its fields of those names. A
 * field the model cannot honour is a 400 naming `param`, never dropped. The body is then checked
 * by the native use case like any other.
 */
export function toModelBody(model: MappableModel, fields: OpenAiFields): MappedRequest {
  if (!model.request) throw paramError('model', `${model.path} takes no requests`);
  const props = propsOf(model);
  const body: Record<string, unknown> = {};
  if (fields.prompt !== undefined) {
    if (!props.prompt) throw paramError('prompt', `${model.path} takes no prompt`);
    body.prompt = fields.prompt;
  }
  mapSize(model, fields.size, body);
  mapSeconds(model, fields.seconds, body);
  mapChoice(model, 'quality', 'quality', fields.quality, body, ['auto']);
  mapChoice(model, 'output_format', 'output_format', fields.output_format, body, [], FORMAT_SYNONYMS[fields.output_format ?? ''] ?? [fields.output_format ?? '']);
  mapChoice(model, 'background', 'background', fields.background, body, ['auto']);
  mapChoice(model, 'style', 'style', fields.style, body, []);
  if (fields.output_compression !== undefined) {
    if (typeOf(props.output_compression) === undefined) throw paramError('output_compression', `${model.path} has no output_compression to set; leave it out`);
    body.output_compression = fields.output_compression;
  }
  const jobs = mapCount(model, fields.n, body);
  return { body, jobs };
}
