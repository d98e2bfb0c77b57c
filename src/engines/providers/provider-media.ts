import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import { DataUriError, decodeDataUri, formatBytes } from '../../lib/data-uri.js';
import { FetchError, fetchInput } from '../../lib/safe-fetch.js';
import { contentTypeOf } from '../../outputs/output-store.js';
import type { OutputFile } from '../engine.js';
import { sniffAsset } from '../media/media-types.js';
import type { ProviderAdapter } from './provider-port.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { MAX_UPSTREAM_OUTPUTS, containsString, replaceString } from '../upstream/upstream-template.js';

/**
 * Media across the provider boundary. In: the request's media inputs (assets, URLs, data URIs),
 * loaded as the local engine loads them, reach the provider as `data:` URIs up to a size and
 * through its file API above it, never as a URL of this server, which it may not reach. Out: the
 * files an answer names, downloaded (through the address guard unless on the provider's own
 * origin) or decoded, capped, judged by their bytes, written to the run's directory.
 */


export interface MediaInput {
  readonly field: string;
  readonly url: string;
}

/**
 * `input` with each media input it carries replaced by what the provider can read. `load` is the
 * run's input loader (it names the field in its errors); `upload` is called with retries by the engine.
 */
export async function providerMediaInput(
  input: Record<string, unknown>,
  media: readonly MediaInput[],
  opts: {
    readonly load: (url: string, field: string) => Promise<Buffer>;
    readonly inlineMaxBytes: number;
    readonly upload: ProviderAdapter['upload'] | undefined;
  },
): Promise<Record<string, unknown>> {
  let out: unknown = input;
  const done = new Set<string>();
  for (const { field, url } of media) {
    // Twice the same URL, or a field the template does not pass on: nothing to do.
    if (done.has(url) || !containsString(out, url)) continue;
    done.add(url);
    const bytes = await opts.load(url, field);
    const sniffed = sniffAsset(bytes);
    const type = sniffed.ok ? contentTypeOf(`f.${sniffed.type}`) : 'application/octet-stream';
    const replacement =
      bytes.length > opts.inlineMaxBytes && opts.upload
        ? await opts.upload(bytes, type, `${field.replace(/[^A-Za-z0-9_-]+/g, '_')}.${sniffed.ok ? sniffed.type : 'bin'}`)
        : `data:${type};base64,${bytes.toString('base64')}`;
    out = replaceString(out, url, replacement);
  }
  return out as Record<string, unknown>;
}

export interface OutputFetch {
  /** The guarded dispatcher (its policy: --allow-private-urls) for URLs on any host but the provider's. */
  readonly guarded: Dispatcher;
  /** Origins trusted as the operator configured them (the base URL's): fetched without the address guard. */
  readonly trustedOrigins: ReadonlySet<string>;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/** Whether an answer value is base64 itself (OpenAI's `b64_json`) rather than a URL. */
const isBase64 = (value: string) => !/^[a-z][a-z0-9+.-]*:/i.test(value) && /^[A-Za-z0-9+/=\s]+$/.test(value);

async function bytesOf(value: string, i: number, fetch: OutputFetch): Promise<Buffer> {
  try {
    if (/^data:/i.test(value)) return decodeDataUri(value, { maxBytes: fetch.maxBytes }).data;
    if (isBase64(value)) {
      if (value.length > Math.ceil(fetch.maxBytes / 3) * 4 + 8) throw new UpstreamError('malformed', `output ${i + 1} is larger than ${formatBytes(fetch.maxBytes)}`);
      return Buffer.from(value, 'base64');
    }
    const url = new URL(value);
    const trusted = fetch.trustedOrigins.has(url.origin);
    const { data } = await fetchInput(url.href, {
      allowPrivate: trusted,
      maxBytes: fetch.maxBytes,
      timeoutMs: fetch.timeoutMs,
      signal: fetch.signal,
      ...(trusted ? {} : { dispatcher: fetch.guarded }),
    });
    return data;
  } catch (err) {
    if (fetch.signal.aborted) throw fetch.signal.reason;
    if (err instanceof UpstreamError) throw err;
    if (err instanceof DataUriError) throw new UpstreamError('malformed', `output ${i + 1} is a data: URI that ${err.reason === 'too_large' ? `is larger than ${formatBytes(fetch.maxBytes)}` : 'cannot be decoded'}`);
    if (err instanceof FetchError) {
      // A refused address, an oversized file or a URL that is no URL is the answer's fault; a
      // network error or timeout reaching the provider's storage may pass.
      if (err.reason === 'network' || err.reason === 'timeout') throw new UpstreamError('unavailable', `output ${i + 1}: ${err.message}`, { cause: err });
      throw new UpstreamError('malformed', `output ${i + 1}: ${err.message}`, { cause: err });
    }
    if (err instanceof TypeError) throw new UpstreamError('malformed', `output ${i + 1} is neither a URL nor base64 data`);
    throw err;
  }
}

/**
 * Writes each file `values` names into `outDir` as `output-<n>.<ext>`, the main output first. A
 * file whose bytes are not one of `allowed` (the model's media types) fails the run: no file of it
 * is kept, and the client is not billed.
 */
export async function storeUpstreamOutputs(values: readonly string[], outDir: string, allowed: readonly string[], fetch: OutputFetch): Promise<OutputFile[]> {
  if (values.length === 0) throw new UpstreamError('malformed', "its answer names no output file where the model's outputs paths point");
  const files: OutputFile[] = [];
  for (const [i, value] of values.slice(0, MAX_UPSTREAM_OUTPUTS).entries()) {
    const bytes = await bytesOf(value, i, fetch);
    const sniffed = sniffAsset(bytes);
    const type = sniffed.ok ? contentTypeOf(`f.${sniffed.type}`) : undefined;
    if (!sniffed.ok || !type || !allowed.includes(type)) {
      throw new UpstreamError('malformed', `output ${i + 1} is ${sniffed.ok ? type : sniffed.what}, not one of ${allowed.join(', ')}`);
    }
    const name = `output-${i + 1}.${sniffed.type}`;
    await writeFile(join(outDir, name), bytes);
    files.push({ name, contentType: type });
  }
  return files;
}
