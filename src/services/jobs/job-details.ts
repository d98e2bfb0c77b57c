import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { formatUsd } from '../../domain/money.js';
import { JOB_STATUSES, isTerminal } from '../../domain/states.js';
import type { JobStatus } from '../../domain/states.js';
import { notFound } from '../../domain/error-catalogue.js';
import { kindOf } from '../../engines/kinds.js';
import { PROVIDER_PREFIX } from '../../engines/providers/provider-bindings.js';
import { isUuid } from '../../lib/ids.js';
import { formatMicros } from '../../lib/time.js';
import { Nullable, StringEnum } from '../../models/schema-kit.js';
import type { LedgerEntry } from '../../store/billing-store.js';
import type { JobSummary, Store } from '../../store/store.js';
import type { AuthContext } from '../identity/identity.js';
import { Job, toJobView } from '../common/job-view.js';

/** A job's status history is short; a job that somehow changed more often shows its first changes. */
const TIMELINE_MAX = 1000;

/** Where a job's money is: its price held, charged (completed), released (failed, cancelled), or no ledger entry at all. */
export const BILLING_STATES = ['held', 'charged', 'released', 'none'] as const;
type BillingState = (typeof BILLING_STATES)[number];

const USD = { pattern: '^\\d+\\.\\d{6}$' } as const;

const DETAILS_EXAMPLE = {
  job: (Job.examples as unknown[])[0],
  request: { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K', creativity: 'balanced' },
  request_id: 'req-7f3a9c',
  timeline: [
    { status: 'queued', at: '2026-11-22T12:00:00.000000Z' },
    { status: 'scheduled', at: '2026-11-22T12:00:00.120000Z' },
    { status: 'processing', at: '2026-11-22T12:00:00.300000Z' },
    { status: 'completed', at: '2026-11-22T12:00:04.250000Z' },
  ],
  price_usd: '0.030000',
  cost_usd: '0.030000',
  billing: 'charged',
};

export const JobDetails = Type.Object(
  {
    job: Job,
    request: Nullable(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'The request body as validated and stored, with defaults filled in',
        examples: [DETAILS_EXAMPLE.request],
      }),
      { description: 'The request body as validated and stored, with defaults filled in; null once a zero-data-retention job ended (it was erased)' },
    ),
    request_id: Nullable(Type.String({ description: 'The X-Request-Id of the request that created the job', examples: [DETAILS_EXAMPLE.request_id] }), {
      description: 'The X-Request-Id of the request that created the job (the server log carries it); null when unknown',
    }),
    timeline: Type.Array(
      Type.Object(
        {
          status: StringEnum(JOB_STATUSES, { description: 'The status the job took', examples: ['queued'] }),
          at: Type.String({ format: 'date-time', description: 'When it took it', examples: ['2026-11-22T12:00:00.000000Z'] }),
        },
        { additionalProperties: false, description: 'One status change' },
      ),
      { description: 'Every status the job has taken, oldest first: its first is the status it was created in (queued, or backlogged)' },
    ),
    price_usd: Nullable(Type.String({ ...USD, description: 'The price held at admission', examples: [DETAILS_EXAMPLE.price_usd] }), {
      description: "The job's price, held from the balance when it was admitted; null when nothing was held",
    }),
    cost_usd: Nullable(Type.String({ ...USD, description: 'What the completed job was charged', examples: [DETAILS_EXAMPLE.cost_usd] }), {
      description: 'What the job was charged once it completed (a metered job: what it made, at most its price); null otherwise',
    }),
    upstream: Type.Optional(
      Nullable(
        Type.Object(
          {
            engine: Type.String({ description: 'The engine that held the work, as models are bound to it: `provider:<name>`, `comfyui:<name>`', examples: ['provider:replicate'] }),
            provider: Type.Optional(
              Type.String({ description: 'Deprecated: `engine` without its `provider:`, for a job run at a hosted provider (the `providers` name); absent for other engines', examples: ['replicate'] }),
            ),
            id: Type.String({ description: "The work's id there: a Replicate prediction, a fal request, a krea job, a ComfyUI prompt", examples: ['ufawqhfynnddngldkgtslldrkq'] }),
            status: Nullable(
              Type.String({
                description:
                  "The upstream's last status as it spelt it; `cancelled` when the job ended (cancelled, timed out, failed) while that status was not a final one, since the engine cancels there what it gives up on; null when the engine records none (ComfyUI) or it is not known",
                examples: ['succeeded'],
              }),
            ),
            usage: Nullable(
              Type.Record(Type.String(), Type.Union([Type.Number(), Type.String()]), {
                description: "What the provider reported it used or cost: Replicate's predict_time, OpenAI's tokens, a krea upstream's cost_usd",
                examples: [{ predict_time: 2.31 }],
              }),
              { description: 'What the provider reported it used or cost; null when it reported nothing' },
            ),
          },
          {
            additionalProperties: false,
            description: "The job's work held elsewhere: at a hosted provider, on a ComfyUI server",
            examples: [{ engine: 'provider:replicate', provider: 'replicate', id: 'ufawqhfynnddngldkgtslldrkq', status: 'succeeded', usage: { predict_time: 2.31 } }],
          },
        ),
        { description: 'For owners and admins, a job whose engine held work elsewhere (a hosted provider, ComfyUI): which engine, its id there, its status and usage, for reconciling invoices; null when the job has none' },
      ),
    ),
    routing: Type.Optional(
      Type.Object(
        {
          engine: Type.Union([Type.String(), Type.Null()], { description: 'The engine that took the job (ran it, or failed it after accepting it); null while none has', examples: ['provider:fal'] }),
          tried: Type.Array(
            Type.Object({
              engine: Type.String({ description: 'The engine, as models are bound to it', examples: ['comfyui:gpu'] }),
              outcome: StringEnum(['ran', 'refused', 'skipped', 'busy', 'spilled'] as const, { description: 'docs/routing.md: ran (took the job), refused (provably did not accept it), skipped (circuit open), busy (at max_in_flight past spill_after_ms), spilled (a remote pool\'s job taken here)', examples: ['refused'] }),
              reason: Type.Optional(Type.String({ description: "Why, for `refused`: the upstream's words, cleaned", examples: ['service unavailable'] })),
              at: Type.String({ format: 'date-time', description: 'When', examples: ['2026-12-01T12:00:00.000Z'] }),
            }),
            { description: 'Every engine tried, in order', examples: [[{ engine: 'comfyui:gpu', outcome: 'refused', reason: 'connection refused', at: '2026-12-01T12:00:00.000Z' }, { engine: 'provider:fal', outcome: 'ran', at: '2026-12-01T12:00:01.000Z' }]] },
          ),
        },
        { examples: [{ engine: 'provider:fal', tried: [{ engine: 'provider:fal', outcome: 'ran', at: '2026-12-01T12:00:01.000Z' }] }], description: "For owners and admins, a job of a model with a chain of engines or an engine limit (docs/routing.md): every engine tried and which one ran it; the upstream's reported cost is in `upstream.usage`. Absent for a job of a model bound to one engine." },
      ),
    ),
    billing: StringEnum(BILLING_STATES, {
      description: 'held: the price is held while the job runs; charged: it completed and was charged; released: it failed or was cancelled, nothing charged; none: no ledger entry',
      examples: ['charged'],
    }),
  },
  { $id: 'JobDetails', additionalProperties: false, description: 'A job with its request, status history and billing', examples: [DETAILS_EXAMPLE] },
);
export type JobDetailsView = Static<typeof JobDetails>;

/**
 * The job's money as of its status: a job not yet ended shows its hold even when its end (which
 * settles the ledger in the same transaction) committed between the two reads.
 */
function billingOf(status: JobStatus, entries: readonly LedgerEntry[]): { billing: BillingState; cost: number | null } {
  const of = (kind: LedgerEntry['kind']) => entries.find((e) => e.kind === kind);
  const hold = of('hold');
  if (!hold) return { billing: 'none', cost: null };
  if (!isTerminal(status)) return { billing: 'held', cost: null };
  const charge = of('charge');
  if (charge) return { billing: 'charged', cost: charge.amountMicros };
  return { billing: of('release') ? 'released' : 'held', cost: null };
}

/** GET /jobs/{id}/details: what a job page shows beyond GET /jobs/{id}. */
export class JobDetailsService {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /** Unknown, malformed and other workspaces' ids are all simply "not found", as for GET /jobs/{id}. */
  async get(auth: AuthContext, id: string): Promise<JobDetailsView> {
    const jobId = id.toLowerCase();
    // The job and its history in one statement, so they agree: the last change is its status.
    const history = isUuid(id) ? await this.#store.jobs.transitions(auth.apiUserId, jobId, 0, TIMELINE_MAX) : undefined;
    const [record, entries] = history ? await Promise.all([this.#store.jobs.getJob(auth.apiUserId, jobId), this.#store.billing.entriesOfJob(jobId)]) : [];
    // Deleted between the reads: gone, as a read after the deletion would say.
    if (!history || !record || !entries) throw notFound(`job '${id}' not found`);
    const { job, transitions } = history;
    const hold = entries.find((e) => e.kind === 'hold');
    const { billing, cost } = billingOf(job.status, entries);
    // A zero-data-retention request is erased by the move that ends the job.
    const erased = record.zeroDataRetention && isTerminal(record.status);
    // The provider's side (its ids, its costs) is the operator's business: owners and admins see it.
    const member = await this.#store.identity.getMember(auth.workspace.id, auth.memberEmail);
    const operator = member?.role === 'owner' || member?.role === 'admin';
    const upstream = operator ? await this.#upstreamOf(jobId, job) : undefined;
    const route = operator ? await this.#store.routes.find(jobId) : undefined;
    return {
      job: toJobView(job),
      request: erased ? null : { ...record.request },
      request_id: record.requestId,
      timeline: transitions.map((t) => ({ status: t.status, at: formatMicros(t.at) })),
      price_usd: hold ? formatUsd(hold.amountMicros) : null,
      cost_usd: cost === null ? null : formatUsd(cost),
      billing,
      ...(upstream === undefined ? {} : { upstream }),
      ...(route === undefined ? {} : { routing: { engine: route.engine, tried: route.trail as unknown as NonNullable<JobDetailsView['routing']>['tried'] } }),
    };
  }

  async #upstreamOf(jobId: string, job: JobSummary): Promise<JobDetailsView['upstream']> {
    const rec = await this.#store.upstreams.find(jobId);
    if (!rec) return null;
    // Each kind reads its own engines' state (engines/kinds.ts); an engine this server has no kind for shows what every record has.
    const seen = kindOf(rec.engine)?.describe?.(rec.state) ?? { status: null, usage: null, final: false };
    const provider = rec.engine.startsWith(PROVIDER_PREFIX) ? { provider: rec.engine.slice(PROVIDER_PREFIX.length) } : {};
    return { engine: rec.engine, ...provider, id: rec.id, status: statusShown(seen.status, seen.final, job), usage: seen.usage === null ? null : { ...seen.usage } };
  }
}

/**
 * The upstream's status as the details show it. Its last recorded status stands while our job
 * runs, once it is final there, and for a completed job (which took its outputs). Once our job
 * ended otherwise, a status the upstream had not finished in is stale: the run that followed it
 * stopped, and an engine cancels there what it gives up on (cancel, timeout, its own failure;
 * docs/decisions.md), so it shows `cancelled`. A job whose worker was lost (`worker_lost`) had no
 * run left to cancel anything: its upstream's fate is not known here, null.
 */
export function statusShown(recorded: string | null, final: boolean, job: Pick<JobSummary, 'status' | 'error'>): string | null {
  if (final || !isTerminal(job.status) || job.status === 'completed') return recorded;
  return job.error?.code === 'worker_lost' ? null : 'cancelled';
}
