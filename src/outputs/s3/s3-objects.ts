import { DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { S3Client, _Object } from '@aws-sdk/client-s3';
import { isOutputKey } from '../output-store.js';
import { ObjectStoreError, call } from './s3-client.js';

/**
 * Where a key's objects live in the bucket: `<prefix>/<key>/<name>` for its files and
 * `<prefix>/<key>/.run` for its marker. The marker says the key is live: a run's scratch writes it,
 * a removal deletes it first, and a file is served, kept or stored only while it is there. Its
 * leading dot keeps it out of the name pattern (no URL reaches it) and sorts it before every file
 * name (which starts with a letter or digit), so a listing meets a key's marker first.
 */
export class S3Layout {
  readonly bucket: string;
  /** `<prefix>/`, or '' for the bucket's root. */
  readonly base: string;

  constructor(bucket: string, prefix: string) {
    this.bucket = bucket;
    this.base = prefix ? `${prefix}/` : '';
  }

  dir(key: string): string {
    return `${this.base}${key}/`;
  }

  file(key: string, name: string): string {
    return `${this.dir(key)}${name}`;
  }

  marker(key: string): string {
    return `${this.dir(key)}${MARKER}`;
  }

  /** The key and the rest of an object's name, if it is under a key of this store. */
  parse(objectKey: string): { key: string; rest: string } | undefined {
    if (!objectKey.startsWith(this.base)) return undefined;
    const path = objectKey.slice(this.base.length);
    const slash = path.indexOf('/');
    const key = path.slice(0, slash);
    const rest = path.slice(slash + 1);
    return slash > 0 && rest !== '' && isOutputKey(key) ? { key, rest } : undefined;
  }
}

export const MARKER = '.run';

/** DeleteObjects takes at most this many keys. */
const DELETE_BATCH = 1000;

/** Every object under `prefix`, page by page (ListObjectsV2 answers at most 1000 a page). */
export async function* listObjects(client: S3Client, bucket: string, prefix: string): AsyncGenerator<_Object> {
  let token: string | undefined;
  do {
    const page = await call('ListObjectsV2', () => client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) })));
    for (const object of page.Contents ?? []) if (object.Key !== undefined) yield object;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

/**
 * Deletes every object under `prefix` (a key's directory), in DeleteObjects batches, listing again
 * until nothing is left: a writer that raced the removal removes its own object, but a listing
 * taken before it landed would not have seen it.
 */
export async function deleteAll(client: S3Client, bucket: string, prefix: string, keep?: (objectKey: string) => boolean): Promise<void> {
  for (let pass = 0; pass < 3; pass++) {
    let batch: string[] = [];
    let deleted = 0;
    for await (const object of listObjects(client, bucket, prefix)) {
      if (keep?.(object.Key!)) continue;
      batch.push(object.Key!);
      if (batch.length >= DELETE_BATCH) {
        deleted += await deleteBatch(client, bucket, batch);
        batch = [];
      }
    }
    if (batch.length > 0) deleted += await deleteBatch(client, bucket, batch);
    if (deleted === 0) return;
  }
}

async function deleteBatch(client: S3Client, bucket: string, keys: readonly string[]): Promise<number> {
  const answer = await call('DeleteObjects', () =>
    client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } })),
  );
  // Per-object failures come back in a 200: a removal that did not finish, for the janitor.
  const failed = (answer.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
  const code = failed[0]?.Code ?? 'InternalError';
  if (failed.length > 0) throw new ObjectStoreError('DeleteObjects', { name: code, $metadata: { httpStatusCode: code === 'AccessDenied' ? 403 : 500 } });
  return keys.length;
}
