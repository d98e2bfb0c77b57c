import type { Outcome } from '../../lib/group-commit.js';
import { newId } from '../../lib/ids.js';
import type { Micros } from '../../lib/time.js';
import { DomainError } from '../../domain/error-catalogue.js';
import type { JobStatus } from '../../domain/states.js';
import type { NewJob, StoreTx } from '../../store/store.js';
import { admissionStatus, fillSlots } from '../common/admission-counts.js';
import { checkAssetInputs } from '../assets/asset-inputs.js';
import type { BillingService } from '../billing/billing.js';
import type { HeldKey, Idempotency } from '../common/idempotency.js';
import type { AuthContext } from '../identity/identity.js';
import { toCreatedJobView } from '../common/job-view.js';
import type { CreatedJobView } from '../common/job-view.js';
import type { MicroUsd } from '../../domain/money.js';
import type { AssetInput } from '../assets/asset-inputs.js';
import { TokenAdmission } from './token-admission.js';

/** Seconds a caller refused with too_many_jobs should wait: about one short job's time. */
export const FULL_RETRY_AFTER_S = 5;

const tooManyJobs = () =>
  new DomainError(
    'too_many_jobs',
    'too many jobs: the workspace is running its maximum number of concurrent jobs and its backlog is full; retry later',
    { retryAfterSeconds: FULL_RETRY_AFTER_S },
  );

/** A job that passed every check of its use case, about to be admitted. */
export interface JobToAdmit {
  /** The job's `type`: a model path, or `node-app/<slug>`. */
  readonly type: string;
  /** What the worker runs: a validated body, or a node-app plan. */
  readonly request: Readonly<Record<string, unknown>>;
  /** Held from the available balance at admission. */
  readonly price: MicroUsd;
  readonly webhookUrl: string | null;
  readonly zeroDataRetention: boolean;
  /** URLs of the request that name this workspace's assets: checked again under the workspace lock. */
  readonly assets: readonly AssetInput[];
  /** With an Idempotency-Key: the key, the endpoint and the body its fingerprint covers. */
  readonly idempotency: { readonly key: string; readonly endpoint: string; readonly body: unknown } | null;
  /** The creating request's id (X-Request-Id), stored with the job. */
  readonly requestId?: string | null;
  /** Checked, unique and sorted (domain/job-tags.ts); absent or empty: none. */
  readonly tags?: readonly string[];
}

/** One create waiting for admission: its caller, its checked job, and its idempotency key if it took one. */
export interface AdmissionRequest {
  readonly auth: AuthContext;
  readonly job: JobToAdmit;
  readonly publicUrl: string;
  readonly held?: HeldKey;
}

export interface AdmissionDeps {
  readonly billing: BillingService;
  readonly idempotency: Idempotency;
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Admits a batch of creates in the caller's one write transaction (group commit: jobs/job-admission.ts).
 * Each workspace is locked once, in id order (the same order in every transaction, so batches of
 * several processes never deadlock), with its counts and balance read in the same statement. Each
 * request is then decided in order exactly as a create alone would be: its assets still there, its
 * price covered by what the requests before it left (else insufficient_balance), a slot or a place
 * in the backlog (else too_many_jobs). A refusal refuses that request alone and writes nothing of it.
 * The admitted jobs are then written together: one hold statement per workspace, the jobs in one
 * per API user (PostgreSQL) or one in all (SQLite), and each idempotency key's answer.
 *
 * Any error that is not a decision (a failed write) throws, and the whole transaction rolls back:
 * the group commit then runs each request alone, so it fails only its own.
 */
export async function admitBatch(tx: StoreTx, requests: readonly AdmissionRequest[], deps: AdmissionDeps, now: Micros): Promise<Outcome<CreatedJobView>[]> {
  const outcomes: Outcome<CreatedJobView>[] = new Array(requests.length);
  const admitted: { index: number; job: NewJob }[] = [];
  const tokens = new TokenAdmission(tx, now, FULL_RETRY_AFTER_S);
  const byWorkspace = new Map<string, number[]>();
  requests.forEach((r, i) => {
    const own = byWorkspace.get(r.auth.workspace.id);
    if (own) own.push(i);
    else byWorkspace.set(r.auth.workspace.id, [i]);
  });
  for (const workspaceId of [...byWorkspace.keys()].sort(byId)) {
    const found = await tx.queue.lockForAdmission(workspaceId);
    if (!found) throw new Error(`workspace ${workspaceId} vanished`);
    const { lock, balance } = found;
    // Older backlogged jobs take any free slot first, so promotion stays in creation order.
    let counts = found.counts;
    if (counts.active < lock.maxConcurrentJobs && counts.backlogged > 0) counts = await fillSlots(tx, lock, now);
    let available = deps.billing.available(balance);
    let heldHere = 0;
    const holds: { jobId: string; type: string; price: number }[] = [];
    for (const index of byWorkspace.get(workspaceId)!) {
      const { auth, job, publicUrl } = requests[index]!;
      try {
        // Again under the lock an asset's DELETE takes: a job is stored only while its assets live.
        if (job.assets.length > 0) await checkAssetInputs(tx.assets, workspaceId, job.assets, publicUrl);
        // The token's own limits before the workspace's: the narrower refusal says more.
        await tokens.check(auth, job.type, job.price);
        if (available === undefined || available < job.price) throw deps.billing.insufficient(job.price, balance, heldHere);
        const status: JobStatus | undefined = admissionStatus(lock, counts);
        if (!status) throw tooManyJobs();
        counts = status === 'queued' ? { ...counts, active: counts.active + 1 } : { ...counts, backlogged: counts.backlogged + 1 };
        available -= job.price;
        heldHere += job.price;
        const id = newId();
        holds.push({ jobId: id, type: job.type, price: job.price });
        tokens.admitted(auth, id, job.price);
        admitted.push({
          index,
          job: {
            id,
            workspaceId,
            apiUserId: auth.apiUserId,
            type: job.type,
            status,
            request: job.request,
            webhookUrl: job.webhookUrl,
            zeroDataRetention: job.zeroDataRetention,
            createdBy: auth.memberEmail,
            requestId: job.requestId ?? null,
            tags: job.tags ?? [],
          },
        });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        outcomes[index] = { ok: false, error: err };
      }
    }
    if (holds.length > 0) await deps.billing.hold(tx, lock, holds, now);
  }
  if (admitted.length === 0) return outcomes;
  const records = await tx.jobs.insertJobs(admitted.map((a) => a.job), now);
  await tokens.write();
  if (records.some((r) => r.status === 'queued')) await tx.queue.notify({ kind: 'queued' });
  for (const [k, a] of admitted.entries()) {
    const view = toCreatedJobView(records[k]!);
    const held = requests[a.index]!.held;
    if (held) await deps.idempotency.complete(tx, held, view.job_id, view);
    outcomes[a.index] = { ok: true, value: view };
  }
  return outcomes;
}
