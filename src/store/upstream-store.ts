import type { Micros } from '../lib/time.js';

/**
 * A job's counterpart at a hosted provider (src/engines/providers/): which provider, its id there
 * and what the engine last knew of it. Written as soon as the provider answers a submission, so a
 * run that dies is resumed by the next one instead of submitted twice; read by the job's details
 * for reconciling invoices. Deleted with its job.
 */
export interface UpstreamRecord {
  readonly jobId: string;
  /** The `providers` name the job ran on. */
  readonly provider: string;
  /** The provider's id for the job. */
  readonly upstreamId: string;
  /** The engine's state: the handle's URLs, the provider's last status, its reported usage. Small JSON. */
  readonly state: Readonly<Record<string, unknown>>;
  readonly updatedAt: Micros;
}

export interface UpstreamStore {
  /**
   * Stores (or replaces) the job's record while `leaseId` is its lease: a run that lost its job
   * writes nothing. False when it did not hold the lease.
   */
  save(record: UpstreamRecord, leaseId: string): Promise<boolean>;
  find(jobId: string): Promise<UpstreamRecord | undefined>;
}
