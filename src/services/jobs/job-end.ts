import { MOVES } from '../../domain/states.js';
import type { EndMove } from '../../domain/states.js';
import type { MicroUsd } from '../../domain/money.js';
import type { StyleArtifact } from '../../engines/engine.js';
import { describeFault } from '../../lib/infra-fault.js';
import type { InfraFault } from '../../lib/infra-fault.js';
import { newId } from '../../lib/ids.js';
import type { Micros } from '../../lib/time.js';
import type { NewStyle } from '../../store/style-store.js';
import type { JobRecord, LockedWorkspace, StoreTx } from '../../store/store.js';
import { fillSlots } from '../common/admission-counts.js';
import type { BillingService } from '../billing/billing.js';
import type { WebhookService } from '../webhooks/webhooks.js';

export interface JobError {
  readonly code: string;
  readonly message: string;
}

/**
 * How a job ends: its worker completes or fails it (under its lease), DELETE cancels it, or remote
 * maintenance fails a job that waited in the queue longer than its model's timeout.
 */
export type JobEnding =
  | {
      readonly move: 'complete';
      readonly id: string;
      readonly leaseId: string;
      readonly result: Readonly<Record<string, unknown>>;
      /** A metered job's charge, from what it made; absent: the hold is charged. */
      readonly chargeMicros?: MicroUsd;
      /** A training run's style artifact: the job's end creates the style, and its result names it. */
      readonly style?: StyleArtifact;
    }
  | { readonly move: 'fail'; readonly id: string; readonly leaseId: string; readonly error: JobError }
  | { readonly move: 'cancel'; readonly id: string }
  /** A remote-bound job no worker claimed in time (remote maintenance): failed from `queued`. */
  | { readonly move: 'expire'; readonly id: string; readonly error: JobError; readonly unchangedSince?: Micros };

/** A job as its end left it, with what the end charged (null: released, or nothing held). */
export type EndedJob = JobRecord & { readonly chargedMicros: MicroUsd | null };

/** The services a job's end writes through. */
export interface JobEndDeps {
  readonly billing: Pick<BillingService, 'settle'>;
  readonly webhooks: Pick<WebhookService, 'enqueue'>;
}

/**
 * The job's guarded move was refused (a worker lost it to a cancel or the reaper; a job already
 * ended): the ledger entry written for it is wrong, so the caller's transaction must roll back.
 * `now`: the job as the refusing transaction saw it (undefined: deleted), so the caller learns
 * why without reading it again after the rollback.
 */
export class JobLost extends Error {
  constructor(
    readonly jobId: string,
    readonly now?: JobRecord,
  ) {
    super(`job ${jobId} is no longer in a status this end may leave`);
    this.name = 'JobLost';
  }
}

/**
 * Every job's end, in the caller's transaction with the job's workspace locked: the hold is
 * charged (completed) or released, the terminal status written (one guarded UPDATE, which also
 * ends the lease and erases a zero-data-retention request), the webhook event put in the outbox, a
 * cancelled job's worker told to abort, and the freed slot given to the oldest backlogged job. A
 * completion with a style artifact also stores the style, and its result carries `style_id`: the
 * style exists exactly when the job is completed, however often a run tries to complete it.
 * Commits with the caller's transaction or not at all; throws `JobLost` when the move is refused.
 * The caller meters the end (`Meter.jobEnded`) after its commit.
 */
export async function endJob(tx: StoreTx, lock: LockedWorkspace, ending: JobEnding, deps: JobEndDeps, now: Micros): Promise<EndedJob> {
  const to = MOVES[ending.move satisfies EndMove].to;
  // The charge comes first because it fixes the completion time: charges are strictly ordered per
  // workspace, so the usage report's cursor is exact.
  const entry = await deps.billing.settle(tx, lock, ending.id, to, now, ending.move === 'complete' ? ending.chargeMicros : undefined);
  const completedAt = to === 'completed' && entry ? entry.at : now;
  const style = ending.move === 'complete' && ending.style ? { id: newId(), artifact: ending.style } : undefined;
  const named = style && ending.move === 'complete' ? { ...ending, result: { ...ending.result, style_id: style.id } } : ending;
  const ended = await moveToEnd(tx, named, completedAt, now);
  if (!ended) throw new JobLost(ending.id, await tx.queue.findJob(ending.id));
  if (ended.workspaceId !== lock.workspaceId) throw new Error(`job ${ended.id} ended under another workspace's lock`);
  if (style) await tx.styles.insertStyle(trainedStyle(ended, style.id, style.artifact), now);
  await deps.webhooks.enqueue(tx, ended, now);
  if (ending.move === 'cancel') await tx.queue.notify({ kind: 'cancelled', jobId: ended.id });
  await fillSlots(tx, lock, now);
  // The charge travels with the job so its caller can meter it once the transaction has committed.
  return { ...ended, chargedMicros: to === 'completed' && entry ? entry.amountMicros : null };
}

function moveToEnd(tx: StoreTx, e: JobEnding, completedAt: Micros, now: Micros): Promise<JobRecord | undefined> {
  switch (e.move) {
    case 'complete':
      return tx.queue.move('complete', { id: e.id, leaseId: e.leaseId, patch: { result: e.result, error: null, completedAt }, now });
    case 'fail':
      return tx.queue.move('fail', { id: e.id, leaseId: e.leaseId, patch: { result: null, error: e.error, completedAt }, now });
    case 'cancel':
      // A job that did not complete has no result: a preview's URL goes with its files.
      return tx.queue.move('cancel', { id: e.id, patch: { result: null, completedAt }, now });
    case 'expire':
      return tx.queue.move('expire', { id: e.id, patch: { result: null, error: e.error, completedAt }, now, ...(e.unchangedSince === undefined ? {} : { unchangedSince: e.unchangedSince }) });
  }
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The style a completed training job made: named, typed and worded by its request; its cover is
 * the job's main output (a URL relative to the server, resolved when shown), kept with its key.
 */
function trainedStyle(job: JobRecord, id: string, artifact: StyleArtifact): NewStyle {
  const q = job.request;
  const urls = job.result?.urls;
  const cover = Array.isArray(urls) && typeof urls[0] === 'string' ? urls[0] : null;
  return {
    id,
    workspaceId: job.workspaceId,
    apiUserId: job.apiUserId,
    trainedBy: job.createdBy,
    jobId: job.id,
    title: text(q.name),
    model: text(q.model) ?? job.type,
    type: text(q.type),
    triggerWord: text(q.trigger_word),
    urls: cover === null ? [] : [cover],
    coverUrl: cover,
    outputKey: job.outputKey,
    artifact,
  };
}

/** The job's end after infrastructure faults: the server's fault, and the client was not billed. */
export function serverUnavailableError(fault: InfraFault): JobError {
  return {
    code: 'server_unavailable',
    message: `the server could not run the job because ${describeFault(fault.kind)}; you were not billed, submit it again later`,
  };
}

export function timeoutError(timeoutMs: number): JobError {
  return { code: 'timeout', message: `the job ran longer than its model's timeout of ${Math.round(timeoutMs / 1000)} s` };
}
