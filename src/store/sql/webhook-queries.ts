import type { Kysely, Selectable } from 'kysely';
import type { Micros } from '../../lib/time.js';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookSecretsTable } from '../schema.js';
import type {
  AttemptResult,
  DeliveryPageQuery,
  DeliveryState,
  LoggedDelivery,
  NewDelivery,
  WebhookAttempt,
  WebhookDelivery,
  WebhookSecrets,
  WebhookStore,
} from '../webhook-store.js';
import type { Transact } from './transact.js';
import { DUE, ENQUEUE, LEASE, LOG_ATTEMPT, REQUEST_IDS, SECRETS, SETTLE_DELIVERY } from './webhook-statements.js';

const num = (v: number | null): number | null => (v === null ? null : Number(v));

const toDelivery = (r: Selectable<WebhookDeliveriesTable>): WebhookDelivery => ({
  id: r.id,
  jobId: r.job_id,
  workspaceId: r.workspace_id,
  url: r.url,
  payload: JSON.parse(r.payload) as Record<string, unknown>,
  state: r.state as DeliveryState,
  attempts: Number(r.attempts),
  nextAttemptAt: num(r.next_attempt_at),
  leaseUntil: num(r.lease_until),
  createdAt: Number(r.created_at),
});

const toAttempt = (r: Selectable<WebhookAttemptsTable>): WebhookAttempt => ({
  attempt: Number(r.attempt),
  attemptedAt: Number(r.attempted_at),
  statusCode: num(r.status_code),
  error: r.error,
  durationMs: Number(r.duration_ms),
  nextRetryAt: num(r.next_retry_at),
});

const toSecrets = (r: Selectable<WebhookSecretsTable>): WebhookSecrets => ({
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousUntil: num(r.previous_until),
});

/** The outbox queries: claims are leases, so a sender that dies leaves its deliveries due again. */
export class SqlWebhookStore implements WebhookStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;
  readonly #skipLocked: boolean;

  constructor(db: Kysely<Database>, transact: Transact, skipLocked: boolean) {
    this.#db = db;
    this.#transact = transact;
    this.#skipLocked = skipLocked;
  }

  async enqueue(d: NewDelivery): Promise<void> {
    // Strictly increasing per workspace (webhook-statements.ts); the caller holds the workspace lock.
    const row = { id: d.id, job_id: d.jobId, workspace_id: d.workspaceId, api_user_id: d.apiUserId, url: d.url, payload: JSON.stringify(d.payload), next_attempt_at: d.now };
    await ENQUEUE.execute(this.#db, row, undefined);
  }

  async claimDue(now: Micros, leaseUntil: Micros, limit: number): Promise<WebhookDelivery[]> {
    // Most polls find nothing: a plain read first spares SQLite its write lock every second.
    if ((await DUE.execute(this.#db, { now, limit }, false)).rows.length === 0) return [];
    return this.#transact(async (db) => {
      // PostgreSQL: senders in other processes pass each other's rows instead of waiting on them.
      const due = (await DUE.execute(db, { now, limit }, this.#skipLocked)).rows;
      if (due.length === 0) return [];
      const { rows } = await LEASE.execute(db, { leaseUntil }, due.length, due);
      const jobIds = [...new Set(rows.map((r) => r.job_id))].map((id) => ({ id }));
      const jobs = jobIds.length === 0 ? [] : (await REQUEST_IDS.execute(db, {}, jobIds.length, jobIds)).rows;
      const requestIds = new Map(jobs.map((j) => [j.id, j.request_id]));
      return rows
        .map((r) => ({ ...toDelivery(r), requestId: requestIds.get(r.job_id) ?? null }))
        .sort((a, b) => (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0));
    });
  }

  recordAttempt({ deliveryId, leaseUntil, attempt, state }: AttemptResult): Promise<boolean> {
    const args = { deliveryId, leaseUntil, state, ...attempt };
    return this.#transact(async (db) => {
      const updated = await SETTLE_DELIVERY.execute(db, args, undefined);
      if (Number(updated.numAffectedRows ?? 0) !== 1) return false;
      await LOG_ATTEMPT.execute(db, args, undefined);
      return true;
    });
  }

  async listForJob(jobId: string): Promise<LoggedDelivery[]> {
    const deliveries = await this.#db.selectFrom('webhook_deliveries').selectAll().where('job_id', '=', jobId).orderBy('created_at').execute();
    return this.#withAttempts(deliveries);
  }

  async listForWorkspace(q: DeliveryPageQuery): Promise<LoggedDelivery[]> {
    // A seek on webhook_deliveries_workspace (workspace_id, created_at), read backwards.
    let query = this.#db.selectFrom('webhook_deliveries').selectAll().where('workspace_id', '=', q.workspaceId);
    if (q.before !== undefined) query = query.where('created_at', '<', q.before);
    return this.#withAttempts(await query.orderBy('created_at', 'desc').limit(q.limit).execute());
  }

  /** Each delivery with its attempts, oldest first: one more query, on the attempts' primary key. */
  async #withAttempts(deliveries: Selectable<WebhookDeliveriesTable>[]): Promise<LoggedDelivery[]> {
    if (deliveries.length === 0) return [];
    const attempts = await this.#db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where(
        'delivery_id',
        'in',
        deliveries.map((d) => d.id),
      )
      .orderBy('attempt')
      .execute();
    return deliveries.map((d) => ({ ...toDelivery(d), attemptLog: attempts.filter((a) => a.delivery_id === d.id).map(toAttempt) }));
  }

  async secrets(workspaceId: string, fresh: string, now: Micros): Promise<WebhookSecrets> {
    // Every delivery attempt asks: a plain read, and a write only the first time.
    const row = (await SECRETS.execute(this.#db, { workspaceId }, undefined)).rows[0];
    return row ? toSecrets(row) : this.#transact((db) => this.#ensureSecret(db, workspaceId, fresh, now));
  }

  rotate(workspaceId: string, fresh: string, previousUntil: Micros, now: Micros): Promise<WebhookSecrets> {
    return this.#transact(async (db) => {
      const current = await this.#ensureSecret(db, workspaceId, fresh, now);
      // A workspace that had no secret yet just got `fresh`: nothing earlier to keep signing with.
      if (current.secret === fresh) return current;
      const row = await db
        .updateTable('webhook_secrets')
        .set({ secret: fresh, previous_secret: current.secret, previous_until: previousUntil })
        .where('workspace_id', '=', workspaceId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toSecrets(row);
    });
  }

  async #ensureSecret(db: Kysely<Database>, workspaceId: string, fresh: string, now: Micros): Promise<WebhookSecrets> {
    await db
      .insertInto('webhook_secrets')
      .values({ workspace_id: workspaceId, secret: fresh, previous_secret: null, previous_until: null, created_at: now })
      .onConflict((oc) => oc.column('workspace_id').doNothing())
      .execute();
    return toSecrets(await db.selectFrom('webhook_secrets').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow());
  }
}
