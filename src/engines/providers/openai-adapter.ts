/**
 * The `openai` provider type: OpenAI's Images API, and any server that speaks it (LocalAI, gateways).
 *
 * Written from OpenAI's API reference and its SDK:
 * - https://platform.openai.com/docs/api-reference/images (create, createEdit; the ImagesResponse object)
 * - https://developers.openai.com/api/docs/guides/image-generation (gpt-image-1: always base64 answers)
 * - openai/openai-node `src/resources/images.ts` (ImageGenerateParams, ImageEditParams, ImagesResponse
 *   with its `usage`) and `src/uploads.ts` (`addFormValue`: an array field `image` goes as `image[]`
 *   parts, a single file as `image`, objects as `key[name]`).
 *
 * The call is synchronous: `POST /images/generations` (JSON) or, when the input carries an image,
 * `POST /images/edits` (multipart/form-data), answers the images at once:
 * `{created, data: [{b64_json | url, revised_prompt?}], usage?}`. There is no job id, so the
 * handle is `sync-<our job id>`: a run restarted after a crash cannot resume such a call, it submits
 * again (and a duplicate costs a second generation at OpenAI). No cancel, no webhooks, no file API.
 *
 * Base URL: OpenAI's SDK takes it with `/v1` (`https://api.openai.com/v1`); a base_url configured
 * without a version segment (`http://localai:8080`) gets `/v1` added (openaiBaseUrl).
 */
import { DataUriError, decodeDataUri } from '../../lib/data-uri.js';
import type { AdapterFactory, ProviderAdapter, SubmitRequest, Submitted, UpstreamStatus, UpstreamUsage } from './provider-port.js';
import { syncHandleId } from './provider-port.js';

export { syncHandleId } from './provider-port.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { providerType } from '../../config/provider-types.js';

const OPENAI = providerType('openai');
export const OPENAI_DEFAULT_BASE_URL = OPENAI.defaultBaseUrl;

/** Where the files are in an Images API answer: base64 (gpt-image-1, `response_format: b64_json`) or URLs (dall-e). */
export const OPENAI_DEFAULT_OUTPUTS = ['data[*].b64_json', 'data[*].url'] as const;

/** Input fields that hold the images of an edit; `mask` goes with them as a file. */
const IMAGE_FIELDS = ['image', 'images'] as const;

/**
 * The base URL calls are made against (the type's rule, config/provider-types.ts): as configured
 * when its path ends in a version segment (`/v1`, as OpenAI's SDK takes it), else with `/v1` added
 * (a LocalAI or proxy root). No trailing slash.
 */
export const openaiBaseUrl = (configured: string): string => OPENAI.baseUrl(configured);


export const openaiAdapter: AdapterFactory = (settings, http): ProviderAdapter => {
  // Absolute URLs on the base URL's origin, so the calls are right whether the engine built `http`
  // on the configured base URL or on the normalised one.
  const base = openaiBaseUrl(settings.baseUrl);

  return {
    type: 'openai',
    defaultOutputs: OPENAI_DEFAULT_OUTPUTS,
    synchronous: true,

    async submit(req: SubmitRequest): Promise<Submitted> {
      const body: Record<string, unknown> = { model: req.model, ...req.input };
      const answer = isEdit(body)
        ? await http.send('POST', `${base}/images/edits`, editForm(body))
        : await http.json('POST', `${base}/images/generations`, body);
      return { handle: { id: syncHandleId(req.jobId) }, status: succeeded(answer) };
    },

    status(): Promise<UpstreamStatus> {
      // Never asked: the answer to submit is final. A caller that asks anyway gets a clear error.
      return Promise.reject(new UpstreamError('malformed', 'the OpenAI Images API is synchronous: a call has no status to ask for'));
    },

    // Nothing to cancel: the engine aborting the call (the run's signal) is the cancel.
    cancel: () => Promise.resolve(),
  };
};

function isEdit(body: Record<string, unknown>): boolean {
  return IMAGE_FIELDS.some((f) => body[f] !== undefined && body[f] !== null);
}

/** An Images API answer as a succeeded status, or `malformed` when it holds no image. */
function succeeded(answer: unknown): UpstreamStatus {
  if (!isObject(answer) || !Array.isArray(answer.data) || answer.data.length === 0) {
    throw new UpstreamError('malformed', 'the answer has no `data` array of images');
  }
  for (const [i, item] of answer.data.entries()) {
    if (!isObject(item) || (typeof item.b64_json !== 'string' && typeof item.url !== 'string')) {
      throw new UpstreamError('malformed', `data[${i}] has neither b64_json nor url`);
    }
  }
  const usage = usageOf(answer.usage);
  return { state: 'succeeded', raw: 'completed', output: answer, ...(usage ? { usage } : {}) };
}

/** `usage` (gpt-image models) flattened: input/output/total tokens and each `*_tokens_details` number as `input_<k>` / `output_<k>`. */
function usageOf(usage: unknown): UpstreamUsage | undefined {
  if (!isObject(usage)) return undefined;
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(usage)) {
    if (typeof value === 'number' && Number.isFinite(value)) out[key] = value;
    const side = /^(input|output)_tokens_details$/.exec(key)?.[1];
    if (side && isObject(value)) {
      for (const [k, v] of Object.entries(value)) if (typeof v === 'number' && Number.isFinite(v)) out[`${side}_${k}`] = v;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The multipart body of `POST /images/edits`, as OpenAI's SDK builds it: an array of images as
 * `image[]` parts (gpt-image models take several), a single one as `image` (what dall-e-2 takes),
 * `mask` as a file, other fields as text (arrays as `key[]`, objects as `key[name]`). Images come
 * as data: URIs (the engine converts media inputs before submitting); `images` may also hold
 * `{image_url}` objects, as in the JSON form of the edit.
 */
function editForm(body: Record<string, unknown>): FormData {
  const form = new FormData();
  const files: unknown[] = [];
  for (const field of IMAGE_FIELDS) {
    const v = body[field];
    if (v === undefined || v === null) continue;
    files.push(...(Array.isArray(v) ? v : [v]).map((x) => (isObject(x) && typeof x.image_url === 'string' ? x.image_url : x)));
  }
  const single = files.length === 1 && !Array.isArray(body.image) && body.images === undefined;
  files.forEach((uri, i) => form.append(single ? 'image' : 'image[]', fileOf(uri, single ? 'image' : `image[${i}]`), `image-${i + 1}${extOf(uri)}`));
  if (body.mask !== undefined && body.mask !== null) form.append('mask', fileOf(body.mask, 'mask'), `mask${extOf(body.mask)}`);
  for (const [key, value] of Object.entries(body)) {
    if ((IMAGE_FIELDS as readonly string[]).includes(key) || key === 'mask') continue;
    appendField(form, key, value);
  }
  return form;
}

function appendField(form: FormData, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') form.append(key, String(value));
  else if (Array.isArray(value)) value.forEach((v) => appendField(form, `${key}[]`, v));
  else if (isObject(value)) for (const [k, v] of Object.entries(value)) appendField(form, `${key}[${k}]`, v);
}

function fileOf(value: unknown, field: string): Blob {
  if (typeof value !== 'string' || !/^data:/i.test(value)) {
    throw new UpstreamError('rejected', `${field}: an image for the OpenAI Images API must be a data: URI (the file is sent in the request)`);
  }
  try {
    const { mediaType, data } = decodeDataUri(value);
    return new Blob([new Uint8Array(data)], { type: mediaType });
  } catch (err) {
    if (err instanceof DataUriError) throw new UpstreamError('rejected', `${field}: ${err.message}`);
    throw err;
  }
}

/** A file name extension from a data: URI's media type: OpenAI checks image files by their name and type. */
function extOf(uri: unknown): string {
  const type = typeof uri === 'string' ? /^data:image\/([a-z0-9.+-]+)/i.exec(uri)?.[1]?.toLowerCase() : undefined;
  return type === 'jpeg' ? '.jpg' : type ? `.${type}` : '.png';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
