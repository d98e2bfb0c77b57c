import { AbortMultipartUploadCommand, DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client, _Object } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { contentTypeOf, isOutputKey, isOutputName, outputUrlPath } from '../output-store.js';
import type { OpenOutput, OutputEntry, OutputScratch, OutputStore, ScratchOptions } from '../output-store.js';
import { ObjectStoreError, call } from './s3-client.js';
import { S3Layout, MARKER, deleteAll, isGeneration, listObjects, newGeneration } from './s3-objects.js';
import { openObject } from './s3-open.js';
import type { S3ObjectInfo } from './s3-open.js';
import { LocalScratch } from './s3-scratch.js';

/** The metadata field holding a file's store time in milliseconds: LastModified has whole seconds only. */
const MTIME_META = 'mtime-ms';
/** The marker's metadata field holding the live generation (a random id, never an ETag: their formats differ between services and answers). */
const GEN_META = 'gen';
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
  /**
   * The client streamed reads (GetObject bodies) go through; default the store's client. A separate
   * one with many sockets keeps slow downloads from taking the sockets HEAD/PUT/LIST need.
   */
  readonly readClient?: S3Client;
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
  readonly #readClient: S3Client;
  readonly #at: S3Layout;
  readonly #scratch: LocalScratch;
  readonly #partBytes: number;
  /** Present when output URLs redirect to the bucket (`output_urls: presign`). */
  readonly presign?: (key: string, name: string) => Promise<string>;
  readonly presignOrigin?: () => Promise<string>;

  constructor(client: S3Client, opts: S3OutputStoreOptions) {
    this.#client = client;
    this.#readClient = opts.readClient ?? client;
    this.#at = new S3Layout(opts.bucket, opts.prefix);
    this.#scratch = new LocalScratch(opts.scratchRoot);
    this.#partBytes = opts.partBytes ?? DEFAULT_PART_BYTES;
    const ttl = opts.presignTtlSeconds;
    if (ttl !== undefined) {
      this.presign = (key, name) => this.#presign(key, name, ttl);
      // Signing is local: a URL of any object of the bucket shows the origin every presigned URL has.
      const probe = new GetObjectCommand({ Bucket: this.#at.bucket, Key: this.#at.file('origin', 'probe', 'probe') });
      this.presignOrigin = async () => new URL(await getSignedUrl(this.#client, probe, { expiresIn: 60 })).origin;
    }
  }

  /**
   * A new run writes a marker with a fresh generation first (a writer of an earlier attempt, pinned
   * to the old one, then fails its `put`, and its files were never in the new generation's
   * directory), then deletes the earlier generations' files. With `keep`, the marker must already
   * be there: a removed or never-started key stays so.
   */
  async scratch(key: string, opts: ScratchOptions = {}): Promise<OutputScratch> {
    if (!isOutputKey(key)) throw new Error('not an output key');
    let generation: string;
    if (opts.keep) {
      const marker = await this.#marker(key);
      if (!marker) {
        await this.#requireBucket();
        throw new KeyNotLive('was never started or has been removed');
      }
      generation = marker.gen;
    } else {
      generation = newGeneration();
      await call('PutObject', () =>
        this.#client.send(new PutObjectCommand({ Bucket: this.#at.bucket, Key: this.#at.marker(key), Body: generation, ContentType: 'text/plain', Metadata: { [GEN_META]: generation } })),
      );
      const ours = this.#at.genDir(key, generation);
      await deleteAll(this.#client, this.#at.bucket, this.#at.dir(key), (o) => o.Key === this.#at.marker(key) || o.Key!.startsWith(ours));
    }
    return this.#scratch.make(key, generation);
  }

  /**
   * Uploads the local file into its run's generation, then looks at the marker again: if the key
   * was removed (or restarted) meanwhile, the object just written is deleted and the put fails, so
   * a deleted job's late writer cannot bring a file back. The object is in the writer's own
   * generation, so deleting it never touches a newer run's file. A removal lists the key's objects
   * only after deleting the marker, so one of the two always sees the other.
   */
  async put(key: string, name: string, fromPath: string): Promise<void> {
    if (!isOutputKey(key) || !isOutputName(name)) throw new Error('not an output key and file name');
    const current = await this.#marker(key);
    if (!current) {
      await this.#requireBucket();
      throw new KeyNotLive('was removed or never started');
    }
    // A file of this process's scratch belongs to the run that made it; another file (none today) joins the live run.
    const gen = this.#scratch.generationOf(dirname(fromPath), key) ?? current.gen;
    if (current.gen !== gen) throw new KeyNotLive('was started again by another run');
    const objectKey = this.#at.file(key, gen, name);
    const upload = new Upload({
      client: this.#client,
      partSize: this.#partBytes,
      queueSize: UPLOAD_QUEUE,
      // lib-storage's own abort on a failed part throws the abort's error instead of the part's (a
      // service without AbortMultipartUpload would turn a 500 into a refusal): #abortUpload does it.
      leavePartsOnError: true,
      params: {
        Bucket: this.#at.bucket,
        Key: objectKey,
        Body: createReadStream(fromPath),
        ContentType: contentTypeOf(name),
        Metadata: { [MTIME_META]: String(Date.now()) },
      },
    });
    await call('Upload', () => upload.done()).catch(async (err: unknown) => {
      await this.#abortUpload(upload, objectKey);
      throw err;
    });
    if ((await this.#marker(key))?.gen !== gen) {
      await call('DeleteObject', () => this.#client.send(new DeleteObjectCommand({ Bucket: this.#at.bucket, Key: objectKey })));
      throw new KeyNotLive('was removed or started again while a file was being stored');
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
    const marker = await this.#marker(key);
    if (!marker) return;
    await call('DeleteObject', () => this.#client.send(new DeleteObjectCommand({ Bucket: this.#at.bucket, Key: this.#at.file(key, marker.gen, name) })));
  }

  /** The live generation's file names (a HEAD for the marker, then one listing of that generation). */
  async names(key: string): Promise<string[]> {
    if (!isOutputKey(key)) return [];
    const marker = await this.#marker(key);
    if (!marker) return [];
    const dir = this.#at.genDir(key, marker.gen);
    const names: string[] = [];
    for await (const object of listObjects(this.#client, this.#at.bucket, dir)) {
      const rest = object.Key!.slice(dir.length);
      if (isOutputName(rest)) names.push(rest);
    }
    return names;
  }

  /**
   * Every key and every leftover, from one streamed listing of the prefix (a page of 1000 objects
   * at a time): a key's objects are adjacent, its marker first. A key with a marker is `key`. A key
   * with objects but no marker is a removal that did not finish: `trash`, named by its key. A live
   * key that also holds objects older than its marker (an earlier generation's: a superseded run's
   * late upload, a new run's cleanup that failed) or objects outside any generation is listed as
   * `trash` too; its removal spares the live generation (`removeEntry`).
   */
  async *list(): AsyncGenerator<OutputEntry> {
    let current: { key: string; markerMs?: number; changedMs: number; leftoverMs?: number } | undefined;
    const entries = function* (c: NonNullable<typeof current>): Generator<OutputEntry> {
      if (c.markerMs !== undefined) yield { kind: 'key', name: c.key, key: c.key, changedMs: c.changedMs };
      if (c.markerMs === undefined) yield { kind: 'trash', name: c.key, key: c.key, changedMs: c.changedMs };
      else if (c.leftoverMs !== undefined) yield { kind: 'trash', name: c.key, key: c.key, changedMs: c.leftoverMs };
    };
    for await (const object of listObjects(this.#client, this.#at.bucket, this.#at.base)) {
      const parsed = this.#at.parse(object.Key!);
      if (!parsed) continue;
      const changedMs = object.LastModified?.getTime() ?? 0;
      if (current?.key !== parsed.key) {
        if (current) yield* entries(current);
        current = { key: parsed.key, changedMs };
      }
      current.changedMs = Math.max(current.changedMs, changedMs);
      if (parsed.rest === MARKER) current.markerMs = changedMs;
      else if (current.markerMs !== undefined && this.#isLeftover(parsed.rest, object, current.markerMs)) current.leftoverMs = Math.max(current.leftoverMs ?? 0, changedMs);
    }
    if (current) yield* entries(current);
  }

  /**
   * A listed key (removed as `remove` does) or trash. Trash of a live key (the marker is there,
   * maybe written again by a new run since the listing) loses only objects older than the marker
   * outside its generation, and objects outside any generation: never the live generation's files.
   */
  async removeEntry(entry: Pick<OutputEntry, 'kind' | 'name'>): Promise<void> {
    if (!isOutputKey(entry.name)) throw new Error('not an output key');
    if (entry.kind === 'key') return this.remove(entry.name);
    const marker = await this.#marker(entry.name);
    const markerKey = this.#at.marker(entry.name);
    const dir = this.#at.dir(entry.name);
    if (!marker) return deleteAll(this.#client, this.#at.bucket, dir, (o) => o.Key === markerKey);
    const live = this.#at.genDir(entry.name, marker.gen);
    await deleteAll(this.#client, this.#at.bucket, dir, (o) => o.Key === markerKey || o.Key!.startsWith(live) || !this.#isLeftover(o.Key!.slice(dir.length), o, marker.changedMs));
  }

  /** The file's size and store time, if the key is live and its generation holds it (two HEADs: the marker's, then the file's). */
  async stat(key: string, name: string): Promise<S3ObjectInfo | undefined> {
    return (await this.#find(key, name))?.info;
  }

  async open(key: string, name: string): Promise<OpenOutput | undefined> {
    const found = await this.#find(key, name);
    return found ? openObject(this.#readClient, this.#at.bucket, found.objectKey, found.info) : undefined;
  }

  url(key: string, name: string): string {
    return outputUrlPath(key, name);
  }

  /** Releases the clients' sockets (S3-only: the runtime's close). */
  close(): void {
    this.#client.destroy();
    if (this.#readClient !== this.#client) this.#readClient.destroy();
  }

  /** A GetObject URL of the live generation's file signed for `ttlSeconds`; the bucket answers with the file's media type. */
  async #presign(key: string, name: string, ttlSeconds: number): Promise<string> {
    if (!isOutputKey(key) || !isOutputName(name)) throw new Error('not an output key and file name');
    const marker = await this.#marker(key);
    // Removed since the route opened it: 404, as the route would have answered a moment earlier.
    if (!marker) throw Object.assign(new Error('the stored file was removed'), { statusCode: 404 });
    const command = new GetObjectCommand({ Bucket: this.#at.bucket, Key: this.#at.file(key, marker.gen, name), ResponseContentType: contentTypeOf(name) });
    return call('presign', () => getSignedUrl(this.#client, command, { expiresIn: ttlSeconds }));
  }

  /**
   * A failed multipart upload's parts are invisible but billed until aborted. Best effort: the
   * upload's own error is what the put reports, and a bucket lifecycle rule
   * (AbortIncompleteMultipartUpload) catches what this misses (a killed process).
   */
  async #abortUpload(upload: Upload, objectKey: string): Promise<void> {
    // lib-storage keeps the id on the instance (typed private); no public accessor exists.
    const uploadId = (upload as unknown as { uploadId?: string }).uploadId;
    if (!uploadId) return;
    await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#at.bucket, Key: objectKey, UploadId: uploadId })).catch(() => undefined);
  }

  /** The live generation's object of the file, if there is one. */
  async #find(key: string, name: string): Promise<{ objectKey: string; info: S3ObjectInfo } | undefined> {
    if (!isOutputKey(key) || !isOutputName(name)) return undefined;
    const marker = await this.#marker(key);
    if (!marker) return undefined;
    const objectKey = this.#at.file(key, marker.gen, name);
    const info = await this.#head(objectKey);
    return info ? { objectKey, info } : undefined;
  }

  /** An object under a live key that no run serves: outside any generation, or older than the marker (an earlier generation's). */
  #isLeftover(rest: string, object: _Object, markerMs: number): boolean {
    const slash = rest.indexOf('/');
    if (slash < 0 || !isGeneration(rest.slice(0, slash))) return true;
    return (object.LastModified?.getTime() ?? 0) < markerMs;
  }

  /** The marker's generation and store time, or undefined when the key is not live. */
  async #marker(key: string): Promise<{ gen: string; changedMs: number } | undefined> {
    const head = await call('HeadObject', () => this.#client.send(new HeadObjectCommand({ Bucket: this.#at.bucket, Key: this.#at.marker(key) })), () => undefined);
    if (!head) return undefined;
    const gen = head.Metadata?.[GEN_META];
    // A service that drops user metadata cannot hold this store's layout: the operator's to fix.
    if (gen === undefined || !isGeneration(gen)) throw new ObjectStoreError('HeadObject', { name: 'MarkerWithoutGeneration', $metadata: { httpStatusCode: 400 } });
    return { gen, changedMs: head.LastModified?.getTime() ?? 0 };
  }

  /**
   * A missing bucket answers HeadObject like a missing object (404 without a body). Where absence
   * would fail a job as the client's fault, the bucket is asked: gone, it is the store refusing.
   */
  async #requireBucket(): Promise<void> {
    const found = await call('HeadBucket', () => this.#client.send(new HeadBucketCommand({ Bucket: this.#at.bucket })).then(() => true), () => false);
    if (!found) throw new ObjectStoreError('HeadBucket', { name: 'NoSuchBucket', $metadata: { httpStatusCode: 404 } });
  }

  async #head(objectKey: string): Promise<S3ObjectInfo | undefined> {
    const head = await call('HeadObject', () => this.#client.send(new HeadObjectCommand({ Bucket: this.#at.bucket, Key: objectKey })), () => undefined);
    if (!head) return undefined;
    const stored = Number(head.Metadata?.[MTIME_META]);
    const mtimeMs = Number.isSafeInteger(stored) && stored > 0 ? stored : (head.LastModified?.getTime() ?? 0);
    return { size: head.ContentLength ?? 0, mtimeMs, etag: head.ETag ?? '' };
  }
}
