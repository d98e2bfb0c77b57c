import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { contentTypeOf, isOutputKey, isOutputName, outputUrlPath } from '../output-store.js';
import type { OpenOutput, OutputEntry, OutputScratch, OutputStore, ScratchOptions } from '../output-store.js';
import { call } from './s3-client.js';
import { S3Layout, MARKER, deleteAll, listObjects } from './s3-objects.js';
import { openObject } from './s3-open.js';
import type { S3ObjectInfo } from './s3-open.js';
import { LocalScratch } from './s3-scratch.js';

/** The metadata field holding a file's store time in milliseconds: LastModified has whole seconds only. */
const MTIME_META = 'mtime-ms';
/** lib-storage's minimum part is 5 MiB; 8 MiB parts, two in flight, bound an upload's memory at ~24 MiB. */
const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
const UPLOAD_QUEUE = 2;

export interface S3OutputStoreOptions {
  readonly bucket: string;
  /** Key prefix without a trailing slash; '' for the bucket's root. */
  readonly prefix: string;
  /** Where runs' scratch directories are made: a local disk (`<dataDir>/scratch`). */
  readonly scratchRoot: string;
  /** Set: output URLs redirect to presigned GetObject URLs that work this long. */
  readonly presignTtlSeconds?: number;
  /** Multipart part size (tests: the 5 MiB minimum). */
  readonly partBytes?: number;
}

/** Thrown by `put` and `scratch` for a key that was removed (or restarted by another run). */
class KeyNotLive extends Error {
  constructor(what: string) {
    super(`the output key ${what}`);
    this.name = 'KeyNotLive';
  }
}

/**
 * Job output files in an S3-compatible bucket, under a key prefix: `<prefix>/<key>/<name>` per file
 * and a `.run` marker per live key (s3-objects.ts). Engines still write into a local scratch
 * directory; `put` streams each reported file up (multipart past one part, never whole in memory)
 * and deletes the local copy. Every S3 failure but absence is an ObjectStoreError, which
 * infra-fault.ts counts as an infrastructure fault.
 */
export class S3OutputStore implements OutputStore {
  readonly #client: S3Client;
  readonly #at: S3Layout;
  readonly #scratch: LocalScratch;
  readonly #partBytes: number;
  /** Present when output URLs redirect to the bucket (`output_urls: presign`). */
  readonly presign?: (key: string, name: string) => Promise<string>;

  constructor(client: S3Client, opts: S3OutputStoreOptions) {
    this.#client = client;
    this.#at = new S3Layout(opts.bucket, opts.prefix);
    this.#scratch = new LocalScratch(opts.scratchRoot);
    this.#partBytes = opts.partBytes ?? DEFAULT_PART_BYTES;
    const ttl = opts.presignTtlSeconds;
    if (ttl !== undefined) this.presign = (key, name) => this.#presign(key, name, ttl);
  }

  /**
   * A new run writes a fresh marker first (a writer of an earlier attempt, pinned to the old one,
   * then fails its `put`), then deletes the earlier attempt's files. With `keep`, the marker must
   * already be there: a removed or never-started key stays so.
   */
  async scratch(key: string, opts: ScratchOptions = {}): Promise<OutputScratch> {
    if (!isOutputKey(key)) throw new Error('not an output key');
    let generation: string;
    if (opts.keep) {
      const marker = await this.#marker(key);
      if (!marker) throw new KeyNotLive('was never started or has been removed');
      generation = marker;
    } else {
      const written = await call('PutObject', () =>
        this.#client.send(new PutObjectCommand({ Bucket: this.#at.bucket, Key: this.#at.marker(key), Body: randomBytes(16).toString('hex'), ContentType: 'text/plain' })),
      );
      generation = written.ETag ?? '';
      await deleteAll(this.#client, this.#at.bucket, this.#at.dir(key), (k) => k === this.#at.marker(key));
    }
    return this.#scratch.make(key, generation);
  }

  /**
   * Uploads the local file, then looks at the marker again: if the key was removed (or restarted)
   * meanwhile, the object just written is deleted and the put fails, so a deleted job's late
   * writer cannot bring a file back. A removal lists the key's objects only after deleting the
   * marker, so one of the two always sees the other.
   */
  async put(key: string, name: string, fromPath: string): Promise<void> {
    if (!isOutputKey(key) || !isOutputName(name)) throw new Error('not an output key and file name');
    const pinned = this.#scratch.generationOf(dirname(fromPath), key);
    const live = async () => {
      const marker = await this.#marker(key);
      return marker !== undefined && (pinned === undefined || marker === pinned);
    };
    if (!(await live())) throw new KeyNotLive('was removed or started again by another run');
    const objectKey = this.#at.file(key, name);
    const upload = new Upload({
      client: this.#client,
      partSize: this.#partBytes,
      queueSize: UPLOAD_QUEUE,
      params: {
        Bucket: this.#at.bucket,
        Key: objectKey,
        Body: createReadStream(fromPath),
        ContentType: contentTypeOf(name),
        Metadata: { [MTIME_META]: String(Date.now()) },
      },
    });
    const done = await call('Upload', () => upload.done());
    if (!(await live())) {
      // Only our own object: a newer run may have stored the same name since.
      const now = await this.#head(objectKey);
      if (now && now.etag === done.ETag) await call('DeleteObject', () => this.#client.send(new DeleteObjectCommand({ Bucket: this.#at.bucket, Key: objectKey })));
      throw new KeyNotLive('was removed while a file was being stored');
    }
    await rm(fromPath, { force: true });
  }

  /** Stops serving the key (its marker goes first), then deletes its objects; local scratch of this process too. */
  async remove(key: string): Promise<void> {
    if (!isOutputKey(key)) throw new Error('not an output key');
    try {
      await call('DeleteObject', () => this.#client.send(new DeleteObjectCommand({ Bucket: this.#at.bucket, Key: this.#at.marker(key) })));
      await deleteAll(this.#client, this.#at.bucket, this.#at.dir(key));
    } finally {
      await this.#scratch.disposeKey(key);
    }
  }

  async removeFile(key: string, name: string): Promise<void> {
    if (!isOutputKey(key) || !isOutputName(name)) throw new Error('not an output key and file name');
    await call('DeleteObject', () => this.#client.send(new DeleteObjectCommand({ Bucket: this.#at.bucket, Key: this.#at.file(key, name) })));
  }

  async names(key: string): Promise<string[]> {
    if (!isOutputKey(key)) return [];
    const names: string[] = [];
    let first = true;
    for await (const object of listObjects(this.#client, this.#at.bucket, this.#at.dir(key))) {
      const rest = object.Key!.slice(this.#at.dir(key).length);
      // The marker sorts first: without it the key is removed (or being removed) and holds nothing.
      if (first && rest !== MARKER) return [];
      first = false;
      if (isOutputName(rest)) names.push(rest);
    }
    return names;
  }

  /**
   * Every key and unfinished removal, from one streamed listing of the prefix (a page of 1000
   * objects at a time): a key's objects are adjacent, its marker first. A key with files but no
   * marker is a removal that did not finish: `trash`, named by its key.
   */
  async *list(): AsyncGenerator<OutputEntry> {
    let current: { key: string; live: boolean; changedMs: number } | undefined;
    const entry = (c: NonNullable<typeof current>): OutputEntry => ({ kind: c.live ? 'key' : 'trash', name: c.key, key: c.key, changedMs: c.changedMs });
    for await (const object of listObjects(this.#client, this.#at.bucket, this.#at.base)) {
      const parsed = this.#at.parse(object.Key!);
      if (!parsed) continue;
      const changedMs = object.LastModified?.getTime() ?? 0;
      if (current?.key === parsed.key) {
        current.changedMs = Math.max(current.changedMs, changedMs);
        continue;
      }
      if (current) yield entry(current);
      current = { key: parsed.key, live: parsed.rest === MARKER, changedMs };
    }
    if (current) yield entry(current);
  }

  /** A listed key (removed as `remove` does) or trash; trash whose key came back to life (a new run) is left alone. */
  async removeEntry(entry: Pick<OutputEntry, 'kind' | 'name'>): Promise<void> {
    if (!isOutputKey(entry.name)) throw new Error('not an output key');
    if (entry.kind === 'key') return this.remove(entry.name);
    if (await this.#marker(entry.name)) return;
    await deleteAll(this.#client, this.#at.bucket, this.#at.dir(entry.name));
  }

  /** The file's size and store time, if the key is live and holds it (two HEADs, side by side). */
  async stat(key: string, name: string): Promise<S3ObjectInfo | undefined> {
    if (!isOutputKey(key) || !isOutputName(name)) return undefined;
    const [file, marker] = await Promise.all([this.#head(this.#at.file(key, name)), this.#marker(key)]);
    return file && marker ? file : undefined;
  }

  async open(key: string, name: string): Promise<OpenOutput | undefined> {
    const found = await this.stat(key, name);
    return found ? openObject(this.#client, this.#at.bucket, this.#at.file(key, name), found) : undefined;
  }

  url(key: string, name: string): string {
    return outputUrlPath(key, name);
  }

  /** Releases the client's sockets (S3-only: the runtime's close). */
  close(): void {
    this.#client.destroy();
  }

  /** A GetObject URL signed for `ttlSeconds`; the bucket answers with the file's media type. */
  #presign(key: string, name: string, ttlSeconds: number): Promise<string> {
    if (!isOutputKey(key) || !isOutputName(name)) throw new Error('not an output key and file name');
    const command = new GetObjectCommand({ Bucket: this.#at.bucket, Key: this.#at.file(key, name), ResponseContentType: contentTypeOf(name) });
    return call('presign', () => getSignedUrl(this.#client, command, { expiresIn: ttlSeconds }));
  }

  /** The marker's ETag (the run's generation), or undefined when the key is not live. */
  async #marker(key: string): Promise<string | undefined> {
    return (await this.#head(this.#at.marker(key)))?.etag;
  }

  async #head(objectKey: string): Promise<S3ObjectInfo | undefined> {
    const head = await call('HeadObject', () => this.#client.send(new HeadObjectCommand({ Bucket: this.#at.bucket, Key: objectKey })), () => undefined);
    if (!head) return undefined;
    const stored = Number(head.Metadata?.[MTIME_META]);
    const mtimeMs = Number.isSafeInteger(stored) && stored > 0 ? stored : (head.LastModified?.getTime() ?? 0);
    return { size: head.ContentLength ?? 0, mtimeMs, etag: head.ETag ?? '' };
  }
}
