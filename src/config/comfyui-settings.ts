import { ConfigError } from './readers.js';
import { isPlainObject } from '../lib/plain-object.js';

/** One ComfyUI server of the config file's `comfyui` section (docs/engines.md#comfyui-engine). */
export interface ComfyuiSettings {
  /** The engine is `comfyui:<name>`. */
  readonly name: string;
  /** `http://gpu-box:8188`: no credentials, no query; a path prefix is kept. */
  readonly baseUrl: string;
  /** Each HTTP call to ComfyUI ends after this long (uploads and /view downloads included). */
  readonly requestTimeoutMs: number;
  /** Between two `/history` polls when the WebSocket is not there, and the first retry backoff. */
  readonly pollIntervalMs: number;
}

export const COMFYUI_NAME_RE = /^[a-z0-9_-]{1,63}$/;
const KEYS = ['base_url', 'request_timeout_ms', 'poll_interval_ms'];

function intIn(raw: unknown, where: string, min: number, max: number, dflt: number): number {
  if (raw === undefined) return dflt;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) throw new ConfigError(`${where} must be a whole number of milliseconds from ${min} to ${max}`);
  return raw;
}

/** The `comfyui` section: `{"<name>": {"base_url": "http://gpu-box:8188", "request_timeout_ms"?, "poll_interval_ms"?}}`. */
export function readComfyuiSettings(raw: unknown, file: string): ComfyuiSettings[] {
  if (raw === undefined) return [];
  if (!isPlainObject(raw)) throw new ConfigError(`${file}: comfyui must be an object of name to {"base_url": "http://gpu-box:8188"}`);
  return Object.entries(raw).map(([name, block]) => {
    const where = `${file}: comfyui.${name}`;
    if (!COMFYUI_NAME_RE.test(name)) throw new ConfigError(`${file}: comfyui name '${name.slice(0, 80)}' must be 1 to 63 of a-z, 0-9, _ and -`);
    if (!isPlainObject(block)) throw new ConfigError(`${where} must be an object such as {"base_url": "http://gpu-box:8188"}`);
    const extra = Object.keys(block).find((k) => !KEYS.includes(k));
    if (extra !== undefined) throw new ConfigError(`${where}: unknown key '${extra}'; the keys are ${KEYS.join(', ')}`);
    if (typeof block.base_url !== 'string') throw new ConfigError(`${where}.base_url is required: ComfyUI's address, such as "http://gpu-box:8188"`);
    let url: URL;
    try {
      url = new URL(block.base_url);
    } catch {
      throw new ConfigError(`${where}.base_url is not a URL: use the form "http://gpu-box:8188"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${where}.base_url must be an http or https URL`);
    if (url.username || url.password) throw new ConfigError(`${where}.base_url must not carry credentials`);
    if (url.search || url.hash) throw new ConfigError(`${where}.base_url must not carry a query or fragment`);
    return Object.freeze({
      name,
      baseUrl: url.href.replace(/\/+$/, ''),
      requestTimeoutMs: intIn(block.request_timeout_ms, `${where}.request_timeout_ms`, 1_000, 600_000, 60_000),
      pollIntervalMs: intIn(block.poll_interval_ms, `${where}.poll_interval_ms`, 10, 60_000, 1_000),
    });
  });
}
