import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../../src/outputs/s3/s3-client.js';
import { S3OutputStore } from '../../src/outputs/s3/s3-output-store.js';
import type { S3OutputStoreOptions } from '../../src/outputs/s3/s3-output-store.js';
import type { S3Server } from './s3-server.js';

/** The store's client of a test S3 server, built as the runtime builds it (createS3Client). */
export function s3ClientOf(server: Pick<S3Server, 'endpoint' | 'bucket' | 'region' | 'accessKeyId' | 'secretAccessKey'>): S3Client {
  return createS3Client({
    kind: 's3',
    bucket: server.bucket,
    prefix: '',
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
}

/** An S3 store in the server's bucket under a fresh prefix (tests share one bucket), scratch under `root`. */
export function s3StoreIn(client: S3Client, server: Pick<S3Server, 'bucket'>, root: string, opts: Partial<S3OutputStoreOptions> = {}): S3OutputStore {
  return new S3OutputStore(client, { bucket: server.bucket, prefix: `t-${randomBytes(6).toString('hex')}/outputs`, scratchRoot: join(root, 'scratch'), ...opts });
}
