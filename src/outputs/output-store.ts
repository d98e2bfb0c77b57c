import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';

/**
 * The output-store port: where a job's files live once a run has made them, and how they are
 * served, listed and removed. The disk store (outputs/disk/) and the S3-compatible store
 * (outputs/s3/) implement it; the worker, routes, janitor and services do not know which. Engines never see it: they write into a local scratch directory, and the run `put`s
 * each file it reports.
 */

/** The URL path under which output files are served; the server prefixes its public URL. */
export const OUTPUTS_PATH = '/outputs';

/** 24 bytes: base64url without padding is exactly 32 characters, and 192 bits cannot be guessed. */
const KEY_BYTES = 24;
const KEY_RE = /^[A-Za-z0-9_-]{32}$/;
/** Plain file names only: no separator and no leading dot, so a name never leaves its key's place. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The one naming rule for a job's output files (docs/decisions.md, "Output file names"): the stem
 * of output `index` (from 0) of the `count` files a job keeps under `base` (`output`, or a role:
 * `model`, `preview`), to which the file's extension is added. A job's only file of a base is
 * `output.png`; of several, they are numbered in the order the result lists them, from 1:
 * `output-1.png`, `output-2.png`. Every engine (local, gateway, ComfyUI, command, and so a
 * remote worker running them) names its files by it.
 */
export function outputStem(base: string, index: number, count: number): string {
  return count === 1 ? base : `${base}-${index + 1}`;
}

/** A fresh output key: the only secret in an output's URL. */
export function newOutputKey(): string {
  return randomBytes(KEY_BYTES).toString('base64url');
}

export function isOutputKey(text: string): boolean {
  return typeof text === 'string' && KEY_RE.test(text);
}

export function isOutputName(text: string): boolean {
  return typeof text === 'string' && NAME_RE.test(text) && !text.includes('..');
}

/** The one table from file extension to media type; anything else is served as opaque bytes. */
const CONTENT_TYPES: ReadonlyMap<string, string> = new Map([
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['webp', 'image/webp'],
  ['heic', 'image/heic'],
  ['mp4', 'video/mp4'],
  ['mov', 'video/quicktime'],
  ['webm', 'video/webm'],
  ['glb', 'model/gltf-binary'],
  ['wav', 'audio/wav'],
  ['mp3', 'audio/mpeg'],
]);

/** Every media type an output may have (a custom model's `output.content_types` are checked against it). */
export const OUTPUT_CONTENT_TYPES: readonly string[] = Object.freeze([...new Set(CONTENT_TYPES.values())]);

export function contentTypeOf(name: string): string {
  const dot = name.lastIndexOf('.');
  const ext = dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
  return CONTENT_TYPES.get(ext) ?? 'application/octet-stream';
}

/**
 * The URL path of a stored file as this server serves it: the one place that spells it. Job
 * outputs are under OUTPUTS_PATH; another owner of stored files (assets) passes its own base.
 */
export function outputUrlPath(key: string, name: string, base: string = OUTPUTS_PATH): string {
  if (!isOutputKey(key) || !isOutputName(name)) throw new Error('not an output key and file name');
  return `${base}/${key}/${name}`;
}

/** What validators (ETag, Last-Modified) and Content-Length are made of. */
export interface OutputInfo {
  readonly size: number;
  readonly mtimeMs: number;
}

/** An inclusive byte range, as HTTP Range counts. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * A stored file open for reading. Size and mtime describe the bytes `stream` will read, even if
 * the job is deleted meanwhile: the disk store holds the file open; the S3 store pins its reads to
 * the object's ETag, so a stream started after a removal fails rather than read other bytes.
 * Whoever opens it either calls `stream` once (the stream then owns and releases the file) or `close`.
 */
export interface OpenOutput extends OutputInfo {
  stream(range?: ByteRange): Readable;
  close(): Promise<void>;
}

/** One stored key (or a removal of one that has not finished), as the janitor sees it. */
export interface OutputEntry {
  /** `key`: a key's live files; `trash`: a retired key whose removal has not finished. */
  readonly kind: 'key' | 'trash';
  /** The entry's name in the store (the key itself for `key`). */
  readonly name: string;
  readonly key: string;
  /** When the entry was made or last changed: the janitor leaves young entries alone. */
  readonly changedMs: number;
}

/** A run's local working directory: the engine writes here, the run `put`s what it reports. */
export interface OutputScratch {
  /** An empty local directory owned by this run. */
  readonly dir: string;
  /** Removes the directory and whatever is left in it; idempotent. */
  dispose(): Promise<void>;
}

export interface ScratchOptions {
  /** Keep the key's stored files; fail if the key was never started or has been removed. */
  readonly keep?: boolean;
}

export interface OutputStore {
  /**
   * Starts a run of `key`: removes what an earlier attempt stored under it (a job reclaimed after
   * a crash starts clean) and hands out a fresh scratch directory on a local disk. With `keep`,
   * what the key holds stays (a remote worker's files arrive one upload at a time) and the key
   * must have been started before: for a removed key this fails, so it stays removed.
   */
  scratch(key: string, opts?: ScratchOptions): Promise<OutputScratch>;
  /**
   * Stores the local file `fromPath` as `name` of `key`, replacing a file of that name. The source
   * is consumed (on disk it is renamed). Fails if the key was removed meanwhile, so a deleted
   * job's late writer cannot bring its files back.
   */
  put(key: string, name: string, fromPath: string): Promise<void>;
  /** The stored file's size and time; undefined for anything else, including unchecked input. */
  stat(key: string, name: string): Promise<OutputInfo | undefined>;
  open(key: string, name: string): Promise<OpenOutput | undefined>;
  /** What a job's result holds for the file: a URL path under the public URL, or an absolute URL. */
  url(key: string, name: string): string;
  /**
   * Removes every file of the key, idempotently. The key stops being served first; if the rest
   * fails this throws, and `list` shows the leftover as `trash` for the janitor.
   */
  remove(key: string): Promise<void>;
  removeFile(key: string, name: string): Promise<void>;
  /** The names of the files `key` holds (its scratch directories are none); empty for an unknown key. */
  names(key: string): Promise<string[]>;
  /** Every stored key and unfinished removal, streamed: a store may hold millions. */
  list(): AsyncIterable<OutputEntry>;
  /** Deletes a listed entry. */
  removeEntry(entry: Pick<OutputEntry, 'kind' | 'name'>): Promise<void>;
  /**
   * Only on a store whose files clients may fetch from it directly (S3 with `output_urls:
   * presign`): a short-lived URL of the file, which the file routes redirect to after their
   * checks. Never stored in a job's result: `url` stays this server's.
   */
  readonly presign?: (key: string, name: string) => Promise<string>;
  /** With `presign`: the origin its URLs have (the console's Content-Security-Policy admits it). */
  readonly presignOrigin?: () => Promise<string>;
}
