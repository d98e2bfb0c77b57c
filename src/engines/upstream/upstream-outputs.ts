import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import { parseRetryAfter } from '../../lib/backoff.js';
import type { Clock } from '../../lib/clock.js';
import { DataUriError, decodeDataUri, formatBytes } from '../../lib/data-uri.js';
import { FetchError, fetchInput } from '../../lib/safe-fetch.js';
import { contentTypeOf, outputStem } from '../../outputs/output-store.js';
import type { OutputFile } from '../engine.js';
import { sniffAsset } from '../media/media-types.js';
import { UpstreamError } from './upstream-error.js';
import { MAX_UPSTREAM_OUTPUTS } from './upstream-template.js';

/**
 * Keeping an upstream's outputs: the files its answer names, downloaded (through the address
 * guard unless on an origin the operator configured) or decoded (`data:` URIs, bare base64),
 * capped, judged by their bytes against the model's media types, written to the run's directory.
 * A download the file host answers 429 or 5xx, or that times out or loses its connection, is the
 * upstream's passing trouble (`unavailable`), retried by `download`; a refused address, an
 * oversized file or bytes of the wrong kind are the answer's fault (`malformed`).
 */

export interface OutputFetch {
  /** The guarded dispatcher (its policy: --allow-private-urls) for URLs on any origin but the trusted ones. */
  readonly guarded: Dispatcher;
  /** Origins trusted as the operator configured them (an API's base URL): fetched without the address guard. */
  readonly trustedOrigins: ReadonlySet<string>;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** Reads a Retry-After date against it. */
  readonly clock: Pick<Clock, 'nowMs'>;
  /** Runs each download, retrying passing trouble (UpstreamRetry.follow); absent: one try. */
  readonly download?: <T>(call: () => Promise<T>) => Promise<T>;
}

/** Whether an answer value is base64 itself (OpenAI's `b64_json`) rather than a URL. */
const isBase64 = (value: string) => !/^[a-z][a-z0-9+.-]*:/i.test(value) && /^[A-Za-z0-9+/=\s]+$/.test(value);

/** Statuses of a file host that say "not now" rather than "no such file". */
const PASSING = (status: number | undefined) => status !== undefined && (status >= 500 || status === 429 || status === 408);

async function download(url: URL, i: number, fetch: OutputFetch): Promise<Buffer> {
  const trusted = fetch.trustedOrigins.has(url.origin);
  try {
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
    if (!(err instanceof FetchError)) throw err;
    if (err.reason === 'network' || err.reason === 'timeout' || (err.reason === 'http_status' && PASSING(err.status))) {
      const retryAfterMs = parseRetryAfter(err.retryAfter, fetch.clock.nowMs());
      throw new UpstreamError('unavailable', `output ${i + 1}: ${err.message}`, { cause: err, ...(err.status === undefined ? {} : { status: err.status }), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
    }
    throw new UpstreamError('malformed', `output ${i + 1}: ${err.message}`, { cause: err });
  }
}

async function bytesOf(value: string, i: number, fetch: OutputFetch): Promise<Buffer> {
  try {
    if (/^data:/i.test(value)) return decodeDataUri(value, { maxBytes: fetch.maxBytes }).data;
    if (isBase64(value)) {
      if (value.length > Math.ceil(fetch.maxBytes / 3) * 4 + 8) throw new UpstreamError('malformed', `output ${i + 1} is larger than ${formatBytes(fetch.maxBytes)}`);
      return Buffer.from(value, 'base64');
    }
  } catch (err) {
    if (err instanceof DataUriError) throw new UpstreamError('malformed', `output ${i + 1} is a data: URI that ${err.reason === 'too_large' ? `is larger than ${formatBytes(fetch.maxBytes)}` : 'cannot be decoded'}`);
    throw err;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UpstreamError('malformed', `output ${i + 1} is neither a URL nor base64 data`);
  }
  return fetch.download ? fetch.download(() => download(url, i, fetch)) : download(url, i, fetch);
}

/**
 * Keeps an upstream's output files, the main output first, whatever the upstream (a provider's
 * URLs, ComfyUI's `/view` files): at most MAX_UPSTREAM_OUTPUTS, each read by `read`, judged by its
 * bytes against `allowed` (the model's media types) and written into `outDir` as
 * `output.<ext>`, or `output-<n>.<ext>` when there are several (outputStem). A file of another type fails the run: no file of it is kept, and the client
 * is not billed. `none` says what was missing when there is no file at all.
 */
export async function keepUpstreamOutputs<T>(sources: readonly T[], read: (source: T, index: number) => Promise<Buffer>, outDir: string, allowed: readonly string[], none: string): Promise<OutputFile[]> {
  if (sources.length === 0) throw new UpstreamError('malformed', none);
  const files: OutputFile[] = [];
  const kept = sources.slice(0, MAX_UPSTREAM_OUTPUTS);
  for (const [i, source] of kept.entries()) {
    const bytes = await read(source, i);
    const sniffed = sniffAsset(bytes);
    const type = sniffed.ok ? contentTypeOf(`f.${sniffed.type}`) : undefined;
    if (!sniffed.ok || !type || !allowed.includes(type)) {
      throw new UpstreamError('malformed', `output ${i + 1} is ${sniffed.ok ? type : sniffed.what}, not one of ${allowed.join(', ')}`);
    }
    const name = `${outputStem('output', i, kept.length)}.${sniffed.type}`;
    await writeFile(join(outDir, name), bytes);
    files.push({ name, contentType: type });
  }
  return files;
}

/** Keeps the files a provider's answer names (URLs through the address guard, or `data:` URIs). */
export function storeUpstreamOutputs(values: readonly string[], outDir: string, allowed: readonly string[], fetch: OutputFetch): Promise<OutputFile[]> {
  return keepUpstreamOutputs(values, (value, i) => bytesOf(value, i, fetch), outDir, allowed, "its answer names no output file where the model's outputs paths point");
}
