import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { PassThrough, Readable } from 'node:stream';
import type { ByteRange, OpenOutput } from '../output-store.js';
import { ObjectStoreError, isChanged, isNotFound } from './s3-client.js';

/** What HeadObject said of a stored object when it was opened. */
export interface S3ObjectInfo {
  readonly size: number;
  readonly mtimeMs: number;
  readonly etag: string;
}

/**
 * An object open for reading. Nothing is held open: each `stream` is a GetObject pinned to the
 * ETag seen at open (If-Match), so the bytes are those `size` and `mtimeMs` describe, or the stream
 * fails. Unlike a file descriptor, an object deleted after the open cannot be read any more: a
 * reader that starts its stream after a removal gets an error, never other bytes.
 */
export function openObject(client: S3Client, bucket: string, objectKey: string, info: S3ObjectInfo): OpenOutput {
  return {
    size: info.size,
    mtimeMs: info.mtimeMs,
    stream: (range?: ByteRange): Readable => {
      const out = new PassThrough();
      const abort = new AbortController();
      // The reader left (or the stream failed): the request and its socket stop too.
      out.once('close', () => abort.abort());
      void fetchInto(client, { Bucket: bucket, Key: objectKey, IfMatch: info.etag, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }, out, abort.signal);
      return out;
    },
    close: () => Promise.resolve(),
  };
}

async function fetchInto(client: S3Client, input: ConstructorParameters<typeof GetObjectCommand>[0], out: PassThrough, signal: AbortSignal): Promise<void> {
  const fail = (err: unknown) => {
    if (!out.destroyed) out.destroy(readError(err));
  };
  try {
    const answer = await client.send(new GetObjectCommand(input), { abortSignal: signal });
    const body = answer.Body;
    if (!(body instanceof Readable)) throw new Error('the object store answered without a body');
    if (out.destroyed) return void body.destroy();
    out.once('close', () => body.destroy());
    body.once('error', fail);
    body.pipe(out);
  } catch (err) {
    if (!signal.aborted) fail(err);
  }
}

/** A read failure as the reader sees it: a gone or changed object plainly, the rest as the store's fault. */
function readError(err: unknown): Error {
  if (isNotFound(err) || isChanged(err)) return new Error('the stored file was removed or replaced after it was opened');
  return err instanceof ObjectStoreError ? err : new ObjectStoreError('GetObject', err);
}
