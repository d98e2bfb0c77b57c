import { isPlainObject } from '../../lib/plain-object.js';
import type { OpenAiFields } from './openai-fields.js';
import { paramError } from './openai-fields.js';

/** An images request as OpenAI's reference defines it, checked, each refusal naming its `param`. */
export interface ImageRequest {
  readonly model: string | undefined;
  readonly fields: OpenAiFields & { readonly prompt: string };
  readonly responseFormat: 'url' | 'b64_json';
}

/** OpenAI's limit on a GPT image prompt. */
export const MAX_PROMPT_CHARS = 32_000;
export const MAX_IMAGES = 10;

/** Every parameter of POST /v1/images/generations (OpenAI's reference); `edits` adds its files and drops `style` and `moderation`. */
const GENERATION_PARAMS = new Set([
  'prompt', 'model', 'n', 'size', 'quality', 'response_format', 'output_format', 'output_compression',
  'background', 'moderation', 'style', 'user', 'stream', 'partial_images',
]);
const EDIT_PARAMS = new Set([
  'prompt', 'model', 'n', 'size', 'quality', 'response_format', 'output_format', 'output_compression',
  'background', 'input_fidelity', 'user', 'stream', 'partial_images',
]);

const isFormFalse = (v: unknown) => v === false || v === 'false';

/**
 * Reads an images request: a JSON object (generations) or a form's text fields (edits, where every
 * value is a string). Unknown parameters are refused as OpenAI refuses them; OpenAI's defaults
 * (`moderation`, `stream: false`, `partial_images: 0`, `user`) are accepted and change nothing.
 */
export function readImageRequest(raw: unknown, kind: 'generations' | 'edits'): ImageRequest {
  if (!isPlainObject(raw)) throw paramError('body', 'send a JSON object with at least prompt');
  const form = kind === 'edits';
  const known = form ? EDIT_PARAMS : GENERATION_PARAMS;
  const present: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!known.has(k)) throw paramError(k.slice(0, 100), `Unrecognized request argument supplied: ${k.slice(0, 100)}`);
    if (v !== null && v !== undefined) present[k] = v;
  }
  const str = (k: string, max = 200): string | undefined => {
    const v = present[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw paramError(k, `${k} must be a string`);
    if (v.length > max) throw paramError(k, `${k} is longer than ${max} characters`);
    return v;
  };
  const oneOf = <T extends string>(k: string, values: readonly T[]): T | undefined => {
    const v = str(k);
    if (v !== undefined && !values.includes(v as T)) throw paramError(k, `${k} must be one of ${values.join(', ')}`);
    return v as T | undefined;
  };
  const int = (k: string, min: number, max: number): number | undefined => {
    const v = present[k];
    if (v === undefined) return undefined;
    const n = typeof v === 'number' ? v : form && typeof v === 'string' && /^-?\d{1,6}$/.test(v.trim()) ? Number(v.trim()) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw paramError(k, `${k} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const prompt = str('prompt', MAX_PROMPT_CHARS);
  if (prompt === undefined || prompt.trim() === '') throw paramError('prompt', 'prompt is required');
  if (present.stream !== undefined && !isFormFalse(present.stream)) throw paramError('stream', 'streaming is not supported; send stream false or leave it out');
  if (int('partial_images', 0, 3) ?? 0) throw paramError('partial_images', 'partial images need streaming, which is not supported; leave partial_images out');
  oneOf('moderation', ['low', 'auto']);
  str('user', 512);
  if (oneOf('input_fidelity', ['high', 'low']) === 'high') throw paramError('input_fidelity', 'input_fidelity high is not supported; leave it out');
  const n = int('n', 1, MAX_IMAGES);
  const size = str('size', 20);
  const quality = oneOf('quality', ['standard', 'hd', 'low', 'medium', 'high', 'auto']);
  const outputFormat = oneOf('output_format', ['png', 'jpeg', 'webp']);
  const compression = int('output_compression', 0, 100);
  const background = oneOf('background', ['transparent', 'opaque', 'auto']);
  const style = form ? undefined : str('style', 100);
  const fields: OpenAiFields & { prompt: string } = {
    prompt,
    ...(n !== undefined ? { n } : {}),
    ...(size !== undefined ? { size } : {}),
    // `standard` is DALL-E 3's default: nothing asked beyond the model's own.
    ...(quality !== undefined && quality !== 'standard' ? { quality } : {}),
    ...(outputFormat !== undefined ? { output_format: outputFormat } : {}),
    ...(compression !== undefined ? { output_compression: compression } : {}),
    ...(background !== undefined ? { background } : {}),
    ...(style !== undefined ? { style } : {}),
  };
  return { model: str('model'), fields, responseFormat: oneOf('response_format', ['url', 'b64_json']) ?? 'url' };
}
