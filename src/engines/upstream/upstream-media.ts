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

/** A media input's bytes as loaded, with what they were judged to be. */
export interface LoadedMedia {
  readonly input: MediaInput;
  /** Its place among the distinct inputs, from 0: for names unique within the job. */
  readonly index: number;
  readonly bytes: Buffer;
  readonly contentType: string;
  /** The file extension of its sniffed type (`bin` for bytes of no known type). */
  readonly ext: string;
}

/**
 * Each distinct media input (by URL) loaded once with the run's loader, judged by its bytes, and
 * handed to `give`, which answers the value the upstream reads in its place (a `data:` URI, an
 * uploaded file's name): every engine that hands media to an upstream does it this way.
 */
export async function handOverMedia(media: readonly MediaInput[], load: MediaInputOptions['load'], give: (loaded: LoadedMedia) => Promise<string>): Promise<Map<string, string>> {
  const given = new Map<string, string>();
  for (const input of media) {
    if (given.has(input.url)) continue;
    const bytes = await load(input.url, input.field);
    const sniffed = sniffAsset(bytes);
    const contentType = sniffed.ok ? contentTypeOf(`f.${sniffed.type}`) : 'application/octet-stream';
    given.set(input.url, await give({ input, index: given.size, bytes, contentType, ext: sniffed.ok ? sniffed.type : 'bin' }));
  }
  return given;
}

/** `input` with each media input it carries replaced by what the upstream can read. */
export async function upstreamMediaInput(input: Record<string, unknown>, media: readonly MediaInput[], opts: MediaInputOptions): Promise<Record<string, unknown>> {
  // A field the template does not pass on is not loaded.
  const carried = media.filter(({ url }) => containsString(input, url));
  const given = await handOverMedia(carried, opts.load, ({ input: { field }, bytes, contentType, ext }) =>
    bytes.length > opts.inlineMaxBytes && opts.upload
      ? opts.upload(bytes, contentType, `${field.replace(/[^A-Za-z0-9_-]+/g, '_')}.${ext}`)
      : Promise.resolve(`data:${contentType};base64,${bytes.toString('base64')}`),
  );
  let out: unknown = input;
  for (const [url, value] of given) out = replaceString(out, url, value);
  return out as Record<string, unknown>;
}
