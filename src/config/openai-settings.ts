import { isPlainObject } from '../lib/plain-object.js';
import { ConfigError } from './readers.js';

/** The config file's `openai` section: how the OpenAI-compatible door (/v1, docs/openai.md) names models and waits. */
export interface OpenAiSettings {
  /** OpenAI model names a client sends (`gpt-image-1`) -> a catalog model path. */
  readonly models: Readonly<Record<string, string>>;
  /** The model of an images request without `model`; absent: the catalog's first image model taking a prompt. */
  readonly defaultImageModel: string | undefined;
  /** The model of a videos request without `model`; absent: the catalog's first video model taking a prompt. */
  readonly defaultVideoModel: string | undefined;
  /** How long POST /v1/images/* waits for its job(s) before answering a timeout (seconds). */
  readonly waitSeconds: number;
}

export const OPENAI_WAIT_SECONDS_DEFAULT = 300;
/** A client's HTTP timeout is what bounds a wait; an hour is past any client's default. */
const WAIT_SECONDS_MAX = 3600;
const KEYS = ['models', 'default_image_model', 'default_video_model', 'wait_seconds'];
/** What OpenAI's clients send as a model name: no spaces or controls, and short. */
export const OPENAI_MODEL_NAME_RE = /^[\x21-\x7e]{1,200}$/;

export const DEFAULT_OPENAI_SETTINGS: OpenAiSettings = Object.freeze({
  models: Object.freeze({}),
  defaultImageModel: undefined,
  defaultVideoModel: undefined,
  waitSeconds: OPENAI_WAIT_SECONDS_DEFAULT,
});

/**
 * `{"models": {"gpt-image-1": "image/vendor-a/model-a-2/medium"}, "default_image_model": "…",
 * "default_video_model": "…", "wait_seconds": 300}`. Whether the model paths exist is checked
 * against the catalog when the server starts (services/openai/openai-models.ts).
 */
export function readOpenAiSettings(raw: unknown, file: string): OpenAiSettings {
  const where = `${file}: openai`;
  if (!isPlainObject(raw)) throw new ConfigError(`${where} must be an object such as {"models": {"gpt-image-1": "image/vendor-a/model-a-2/medium"}}`);
  const extra = Object.keys(raw).find((k) => !KEYS.includes(k));
  if (extra !== undefined) throw new ConfigError(`${where}: unknown key '${extra.slice(0, 80)}'; the keys are ${KEYS.join(', ')}`);
  const models: Record<string, string> = {};
  if (raw.models !== undefined) {
    if (!isPlainObject(raw.models)) throw new ConfigError(`${where}.models must be an object of OpenAI model name to model path`);
    for (const [name, path] of Object.entries(raw.models)) {
      if (!OPENAI_MODEL_NAME_RE.test(name)) throw new ConfigError(`${where}.models: '${name.slice(0, 80)}' must be 1 to 200 printable characters without spaces`);
      if (typeof path !== 'string' || path === '') throw new ConfigError(`${where}.models.${name} must be a model path such as "image/vendor-a/model-a-2/medium"`);
      models[name] = path;
    }
  }
  const modelPath = (key: string): string | undefined => {
    const v = raw[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw new ConfigError(`${where}.${key} must be a model path or an alias of openai.models`);
    return v;
  };
  let waitSeconds = OPENAI_WAIT_SECONDS_DEFAULT;
  if (raw.wait_seconds !== undefined) {
    const w = raw.wait_seconds;
    if (typeof w !== 'number' || !Number.isInteger(w) || w < 1 || w > WAIT_SECONDS_MAX) throw new ConfigError(`${where}.wait_seconds must be a whole number of seconds from 1 to ${WAIT_SECONDS_MAX}`);
    waitSeconds = w;
  }
  return Object.freeze({
    models: Object.freeze(models),
    defaultImageModel: modelPath('default_image_model'),
    defaultVideoModel: modelPath('default_video_model'),
    waitSeconds,
  });
}
