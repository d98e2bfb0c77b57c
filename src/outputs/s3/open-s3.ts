import { join } from 'node:path';
import type { Clock } from '../../lib/clock.js';
import type { DiskState } from '../disk/disk-check.js';
import { createS3Client } from './s3-client.js';
import type { S3StoreConfig } from './s3-client.js';
import { StorageCheck } from './s3-check.js';
import { S3OutputStore } from './s3-output-store.js';

/** Where runs' scratch directories go under the data dir when outputs live in a bucket. */
export const SCRATCH_DIR = 'scratch';

export interface S3Parts {
  readonly outputs: S3OutputStore;
  /** The data dir's check and the bucket's, as one (readiness, job creation, claims). */
  readonly check: StorageCheck;
  /** Releases the client's sockets. */
  close(): void;
}

/** The S3 store of `output_store: s3://...`; the runtime imports this module only then, so `admin` on disk never loads the SDK. */
export function openS3OutputStore(
  config: S3StoreConfig,
  opts: { readonly dataDir: string; readonly presignTtlSeconds: number | undefined; readonly clock: Clock; readonly disk: { check(): Promise<DiskState> } },
): S3Parts {
  const client = createS3Client(config);
  const outputs = new S3OutputStore(client, {
    bucket: config.bucket,
    prefix: config.prefix,
    scratchRoot: join(opts.dataDir, SCRATCH_DIR),
    ...(opts.presignTtlSeconds !== undefined ? { presignTtlSeconds: opts.presignTtlSeconds } : {}),
  });
  return { outputs, check: new StorageCheck(opts.disk, client, config.bucket, opts.clock), close: () => outputs.close() };
}
