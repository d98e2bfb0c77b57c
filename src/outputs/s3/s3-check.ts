import { HeadBucketCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Clock } from '../../lib/clock.js';
import { infraFault } from '../../lib/infra-fault.js';
import type { DiskState } from '../disk/disk-check.js';
import { call } from './s3-client.js';

/** How long one answer is reused: /readyz and every claim ask, the bucket is asked once in this. */
export const BUCKET_CHECK_TTL_MS = 5000;
/** A bucket that has not answered in this long counts as unreachable (the SDK's retries included). */
export const BUCKET_CHECK_TIMEOUT_MS = 2000;

/**
 * Can the process store outputs? The data dir (the runs' scratch is still local) and the bucket
 * (HeadBucket, answered within BUCKET_CHECK_TIMEOUT_MS). Shared, like DiskCheck, by /readyz, job
 * creation and the worker's claims: while the bucket is unreachable the process reports not ready,
 * refuses new jobs and uploads with 503, and claims nothing, rather than take work it cannot store.
 */
export class StorageCheck {
  readonly #disk: { check(): Promise<DiskState> };
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #clock: Clock;
  #last: { at: number; state: Promise<DiskState> } | undefined;

  constructor(disk: { check(): Promise<DiskState> }, client: S3Client, bucket: string, clock: Clock) {
    this.#disk = disk;
    this.#client = client;
    this.#bucket = bucket;
    this.#clock = clock;
  }

  async check(): Promise<DiskState> {
    const disk = await this.#disk.check();
    if (!disk.ok) return disk;
    const bucket = await this.#bucketState();
    return bucket.ok ? disk : bucket;
  }

  #bucketState(): Promise<DiskState> {
    const now = this.#clock.nowMs();
    if (!this.#last || now - this.#last.at >= BUCKET_CHECK_TTL_MS || now < this.#last.at) {
      this.#last = { at: now, state: this.#measure() };
    }
    return this.#last.state;
  }

  async #measure(): Promise<DiskState> {
    try {
      await call('HeadBucket', () => this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }), { abortSignal: AbortSignal.timeout(BUCKET_CHECK_TIMEOUT_MS) }));
      return { ok: true, freeBytes: 0 };
    } catch (err) {
      const fault = infraFault(err);
      return { ok: false, kind: fault?.kind ?? 'object_store_unreachable', errno: fault?.code };
    }
  }
}
