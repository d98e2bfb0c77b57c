import { contentTypeOf } from '../../outputs/output-store.js';
import { sniffAsset } from '../media/media-types.js';
import { containsString, replaceString } from './upstream-template.js';

/**
 * A request's media inputs (assets, URLs, data URIs) on their way to an upstream: loaded as the
 * local engine loads them (the run's loader, with its guard and caps), then given to the upstream
 * as `data:` URIs up to a size and through its file API above it, never as a URL of this server,
 * which the upstream may not reach.
 */

export interface MediaInput {
  readonly field: string;
  readonly url: string;
}

export interface MediaInputOptions {
  /** The run's input loader (EngineContext.loadInput): it names the field in its errors. */
  readonly load: (url: string, field: string) => Promise<Buffer>;
  /** Inputs up to this size go inline, as `data:` URIs. */
  readonly inlineMaxBytes: number;
  /** Puts a larger file where the upstream reads it, answering the value to give it; absent: inline whatever the size. */
  readonly upload: ((bytes: Buffer, contentType: string, name: string) => Promise<string>) | undefined;
}

/** `input` with each media input it carries replaced by what the upstream can read. */
export async function upstreamMediaInput(input: Record<string, unknown>, media: readonly MediaInput[], opts: MediaInputOptions): Promise<Record<string, unknown>> {
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
