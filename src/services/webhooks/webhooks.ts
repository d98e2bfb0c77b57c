// Room services/webhooks/: the webhook outbox and its deliveries: a job's end enqueued in the same transaction,
// attempts with retries, signing secrets, and the delivery logs.
// May import from services/: identity, common; test/unit/layers.test.ts holds the order.
import type { Clock } from '../../lib/clock.js';
import { retryDelayMs, withRetryAfter } from '../../lib/backoff.js';
import { isUuid, newId } from '../../lib/ids.js';
import { newWebhookSecret } from '../../lib/standard-webhooks.js';
import { formatMicros, formatMicrosOrNull as iso, msToMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import type { JobRecord, Store, StoreTx, Workspace } from '../../store/store.js';
import type { DeliveryState, LoggedDelivery, WebhookAttempt, WebhookDelivery } from '../../store/webhook-store.js';
import { notFound } from '../../domain/error-catalogue.js';
import type { AuthContext, IdentityService } from '../identity/identity.js';
import { toJobView } from '../common/job-view.js';
import { noMeter } from '../common/meter.js';
import type { Meter, WebhookAttemptOutcome } from '../common/meter.js';

/** After a rotation, the previous secret keeps signing for this long. */
export const ROTATION_GRACE_MS = 24 * 3_600_000;

/** How one attempt went, as the sender saw it (src/worker/webhook-post.ts). */
export interface AttemptOutcome {
  readonly outcome: 'delivered' | 'retry' | 'gone' | 'refused';
  readonly status: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly retryAfterMs?: number;
}

/** An attempt's outcome by the state it left its delivery in: `pending` means another try follows. */
const ATTEMPT_OUTCOMES: Readonly<Record<DeliveryState, WebhookAttemptOutcome>> = Object.freeze({
  pending: 'retry',
  delivered: 'delivered',
  exhausted: 'exhausted',
  gone: 'gone',
  refused: 'refused',
});

/** The delivery logs' views: declared once, as schemas (delivery-view.ts). */
import type { WebhookDelivery as DeliveryView, WebhookDeliveryList, WebhookDeliveryPage } from './delivery-view.js';
import { pageOf } from '../common/paging.js';
export type { DeliveryView };

/** The secret as GET /workspace/webhook-secret and the admin CLI show it: declared once, as a schema (workspace-views.ts). */
import type { WebhookSecret as SecretReport } from '../identity/workspace-views.js';
export type { SecretReport };

/** A delivery as the delivery logs show it. */
function toDeliveryView(d: LoggedDelivery): DeliveryView {
  return {
    webhook_id: d.id,
    event: String(d.payload.status),
    url: redact(d.url),
    state: d.state,
    created_at: formatMicros(d.createdAt),
    next_attempt_at: d.state === 'pending' ? iso(d.nextAttemptAt) : null,
    attempts: d.attemptLog.map((a) => ({
      attempt: a.attempt,
      attempted_at: formatMicros(a.attemptedAt),
      status: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
      next_retry_at: iso(a.nextRetryAt),
    })),
  };
}

/** A URL as the delivery log shows it: user-info (a receiver's basic-auth password) removed. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}

/**
 * Webhooks (spec 6): the outbox row written with the job's end, the per-workspace signing secrets,
 * and what each attempt means for the next one. Sending is the worker's (src/worker/webhook-sender.ts).
 */
export class WebhookService {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #identity: IdentityService;
  readonly #random: () => number;
  readonly #meter: Meter;

  constructor(store: Store, clock: Clock, identity: IdentityService, random: () => number = Math.random, meter: Meter = noMeter) {
    this.#store = store;
    this.#meter = meter;
    this.#clock = clock;
    this.#identity = identity;
    this.#random = random;
  }

  #now(): Micros {
    return msToMicros(this.#clock.nowMs());
  }

  /** In the transaction that ends the job: the event, if the job asked for one. */
  async enqueue(tx: StoreTx, job: JobRecord, now: Micros): Promise<boolean> {
    if (!job.webhookUrl) return false;
    await tx.webhooks.enqueue({
      id: `msg_${newId().replace(/-/g, '')}`,
      jobId: job.id,
      workspaceId: job.workspaceId,
      apiUserId: job.apiUserId,
      url: job.webhookUrl,
      payload: { ...toJobView(job) },
      now,
    });
    // Senders in other processes hear of it at commit (PostgreSQL), not at their next poll.
    await tx.queue.notify({ kind: 'webhook' });
    return true;
  }

  /** The secrets that sign now: the current one, and the previous one during its grace period. */
  async signingSecrets(workspaceId: string): Promise<string[]> {
    const now = this.#now();
    const s = await this.#store.webhooks.secrets(workspaceId, newWebhookSecret(), now);
    return s.previousSecret && s.previousUntil !== null && now < s.previousUntil ? [s.secret, s.previousSecret] : [s.secret];
  }

  claimDue(leaseMs: number, limit: number): Promise<{ deliveries: WebhookDelivery[]; leaseUntil: Micros }> {
    const now = this.#now();
    const leaseUntil = now + leaseMs * 1000;
    return this.#store.webhooks.claimDue(now, leaseUntil, limit).then((deliveries) => ({ deliveries, leaseUntil }));
  }

  /**
   * Records an attempt that started at `startedMs`, and decides what follows: done (2xx), stop
   * (410, or a URL we refuse), or the next try after the backoff (or the receiver's Retry-After,
   * if longer), until the schedule runs out. False if another sender had taken the delivery over.
   */
  async record(delivery: WebhookDelivery, leaseUntil: Micros, result: AttemptOutcome, startedMs: number): Promise<boolean> {
    const attempt = delivery.attempts + 1;
    let state: DeliveryState;
    let nextRetryAt: Micros | null = null;
    if (result.outcome === 'delivered') state = 'delivered';
    else if (result.outcome === 'gone') state = 'gone';
    else if (result.outcome === 'refused') state = 'refused';
    else {
      const backoff = retryDelayMs(attempt, this.#random);
      state = backoff === undefined ? 'exhausted' : 'pending';
      if (backoff !== undefined) nextRetryAt = this.#now() + withRetryAfter(backoff, result.retryAfterMs) * 1000;
    }
    const logged: WebhookAttempt = {
      attempt,
      attemptedAt: msToMicros(startedMs),
      statusCode: result.status,
      error: result.error,
      durationMs: Math.max(0, Math.round(result.durationMs)),
      nextRetryAt,
    };
    const recorded = await this.#store.webhooks.recordAttempt({ deliveryId: delivery.id, leaseUntil, attempt: logged, state });
    // An attempt another sender took over is that sender's to count.
    if (recorded) this.#meter.webhookAttempt(ATTEMPT_OUTCOMES[state]);
    return recorded;
  }

  /** GET /jobs/{id}/webhook-deliveries: what happened to the job's webhook, attempt by attempt. */
  async deliveries(auth: AuthContext, jobId: string): Promise<WebhookDeliveryList> {
    const job = isUuid(jobId) ? await this.#store.jobs.getJobSummary(auth.apiUserId, jobId.toLowerCase()) : undefined;
    if (!job) throw notFound(`job '${jobId}' not found`);
    const rows = await this.#store.webhooks.listForJob(job.id);
    return { items: rows.map(toDeliveryView) };
  }

  /**
   * GET /webhook-deliveries: the workspace's deliveries of every job, newest first, each with its
   * job id; a deleted job's delivery stays until the retention janitor prunes it.
   */
  async workspaceDeliveries(auth: AuthContext, page: { readonly before?: Micros; readonly limit: number }): Promise<WebhookDeliveryPage> {
    const rows = await this.#store.webhooks.listForWorkspace({ workspaceId: auth.workspace.id, before: page.before, limit: page.limit + 1 });
    const { page: items, next_cursor } = pageOf(rows, page.limit, (d) => d.createdAt);
    return { items: items.map((d) => ({ job_id: d.jobId, ...toDeliveryView(d) })), next_cursor };
  }

  /** Owners and admins; the secret is made on first use. */
  async showSecret(workspace: string | Workspace, asEmail: string): Promise<SecretReport> {
    const ws = await this.#identity.workspace(workspace);
    await this.#identity.requireRole(ws, asEmail, ['owner', 'admin'], 'see the webhook secret');
    const s = await this.#store.webhooks.secrets(ws.id, newWebhookSecret(), this.#now());
    return this.#report(ws.id, s.secret, s.previousUntil);
  }

  /** Owners and admins; the previous secret keeps signing for ROTATION_GRACE_MS. */
  async rotateSecret(workspace: string | Workspace, asEmail: string): Promise<SecretReport> {
    const ws = await this.#identity.workspace(workspace);
    await this.#identity.requireRole(ws, asEmail, ['owner', 'admin'], 'rotate the webhook secret');
    const now = this.#now();
    const s = await this.#store.webhooks.rotate(ws.id, newWebhookSecret(), now + ROTATION_GRACE_MS * 1000, now);
    return this.#report(ws.id, s.secret, s.previousUntil);
  }

  #report(workspaceId: string, secret: string, previousUntil: Micros | null): SecretReport {
    const live = previousUntil !== null && this.#now() < previousUntil;
    return { workspace_id: workspaceId, secret, previous_secret_valid_until: live ? formatMicros(previousUntil) : null };
  }
}
