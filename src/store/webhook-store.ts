import type { Micros } from '../lib/time.js';

export type DeliveryState = 'pending' | 'delivered' | 'gone' | 'refused' | 'exhausted';

export interface WebhookDelivery {
  /** The `webhook-id` header. */
  readonly id: string;
  readonly jobId: string;
  readonly workspaceId: string;
  readonly url: string;
  /** The job view at its end (output URLs relative). */
  readonly payload: Readonly<Record<string, unknown>>;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly nextAttemptAt: Micros | null;
  readonly leaseUntil: Micros | null;
  readonly createdAt: Micros;
  /** The X-Request-Id that created the job, when claimed for sending and the job had one. */
  readonly requestId?: string | null;
}

export interface WebhookAttempt {
  readonly attempt: number;
  readonly attemptedAt: Micros;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly nextRetryAt: Micros | null;
}

export interface NewDelivery {
  readonly id: string;
  readonly jobId: string;
  readonly workspaceId: string;
  readonly apiUserId: string;
  readonly url: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly now: Micros;
}

/** The outcome of one attempt, written with the delivery's new state. */
export interface AttemptResult {
  readonly deliveryId: string;
  /** The lease the sender claimed with: a sender whose lease was taken over writes nothing. */
  readonly leaseUntil: Micros;
  readonly attempt: WebhookAttempt;
  readonly state: DeliveryState;
}

export interface WebhookSecrets {
  readonly secret: string;
  readonly previousSecret: string | null;
  readonly previousUntil: Micros | null;
}

/** A delivery with its attempts, oldest first: what the delivery logs show. */
export type LoggedDelivery = WebhookDelivery & { readonly attemptLog: readonly WebhookAttempt[] };

/** A page of a workspace's deliveries, newest first. */
export interface DeliveryPageQuery {
  readonly workspaceId: string;
  /** Only deliveries created strictly before this instant (the previous page's cursor). */
  readonly before?: Micros;
  readonly limit: number;
}

/** The webhook outbox, its attempts, and the per-workspace signing secrets. */
export interface WebhookStore {
  /**
   * Call inside the transaction that ends the job, which holds the workspace lock: the delivery's
   * created_at is `now`, or one past the workspace's newest delivery if that is later, so
   * creation times are strictly increasing per workspace and a time cursor is exact.
   */
  enqueue(delivery: NewDelivery): Promise<void>;
  /**
   * Takes up to `limit` pending deliveries due at `now` whose lease is free, leasing them until
   * `leaseUntil`. Each is taken by one sender only.
   */
  claimDue(now: Micros, leaseUntil: Micros, limit: number): Promise<WebhookDelivery[]>;
  /** Records the attempt and the new state; false (nothing written) if the lease was lost. */
  recordAttempt(result: AttemptResult): Promise<boolean>;
  /** The job's deliveries with their attempts, oldest first. */
  listForJob(jobId: string): Promise<LoggedDelivery[]>;
  /** The workspace's deliveries of every job, newest first, with their attempts. */
  listForWorkspace(query: DeliveryPageQuery): Promise<LoggedDelivery[]>;
  /** The workspace's secrets; `fresh` is stored first if it has none yet. */
  secrets(workspaceId: string, fresh: string, now: Micros): Promise<WebhookSecrets>;
  /** Makes `fresh` the secret; the old one keeps signing until `previousUntil`. */
  rotate(workspaceId: string, fresh: string, previousUntil: Micros, now: Micros): Promise<WebhookSecrets>;
}
