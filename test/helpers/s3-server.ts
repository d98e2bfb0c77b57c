import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/** A real S3-compatible server on loopback (s3rver, installed by `npm ci`), with one empty bucket. */
export interface S3Server {
  /** `http://127.0.0.1:<port>`; address buckets path-style. */
  readonly endpoint: string;
  readonly bucket: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** The `output_store` value for this bucket under `prefix`. */
  storeUrl(prefix?: string): string;
  /** The MEDIAGEN_* environment of a `mediagen serve` process that stores in this bucket under `prefix`. */
  env(prefix?: string): Record<string, string>;
  close(): Promise<void>;
}

/** s3rver accepts these credentials only. */
const KEY = 'S3RVER';

export async function startS3Server(bucket = 'mediagen-test'): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), 'mediagen-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const storeUrl = (prefix = '') => `s3://${bucket}${prefix ? `/${prefix}` : ''}`;
  return {
    endpoint,
    bucket,
    region: 'us-east-1',
    accessKeyId: KEY,
    secretAccessKey: KEY,
    storeUrl,
    env: (prefix = '') => ({
      MEDIAGEN_OUTPUT_STORE: storeUrl(prefix),
      MEDIAGEN_S3_ENDPOINT: endpoint,
      MEDIAGEN_S3_REGION: 'us-east-1',
      MEDIAGEN_S3_FORCE_PATH_STYLE: 'true',
      MEDIAGEN_S3_ACCESS_KEY_ID: KEY,
      MEDIAGEN_S3_SECRET_ACCESS_KEY: KEY,
    }),
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
