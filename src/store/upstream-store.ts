import type { Micros } from '../lib/time.js';

/**
 * Work an engine holds elsewhere for a job (a hosted provider's job, a ComfyUI prompt): which
 * engine, the work's id there and what the engine last knew of it. Written as soon as the work
 * exists there, so a run that dies is resumed by the next one instead of starting it twice; read
 * by the job's details for reconciling invoices. Deleted with its job.
 */
export interface UpstreamRecord {
  readonly jobId: string;
  /** The engine holding the work, as a model is bound to it: `provider:replicate`, `comfyui:gpu`. */
  readonly engine: string;
  /** The work's id there: a provider's job id, a ComfyUI prompt id. */
  readonly id: string;
  /** The engine's own state (a provider's handle, last status and usage; a prompt's client id). Small JSON. */
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
