import type { Dispatcher } from 'undici';
import type { Clock } from '../lib/clock.js';
import { webhookHeaders } from '../lib/standard-webhooks.js';
import type { JobSignals } from '../services/jobs/job-signals.js';
import { presentJob } from '../services/common/job-view.js';
import type { JobView } from '../services/common/job-view.js';
import type { WebhookService } from '../services/webhooks/webhooks.js';
import type { WebhookDelivery } from '../store/webhook-store.js';
import type { Log } from '../lib/log.js';
import { postWebhook } from './webhook-post.js';
import { SlotLoop } from './slot-loop.js';

export interface WebhookSenderDeps {
  readonly webhooks: WebhookService;
  readonly signals: JobSignals;
  readonly clock: Clock;
  /** From createGuardedDispatcher: its address policy is the webhook SSRF guard. */
  readonly dispatcher: Dispatcher;
  /** Where output URLs in payloads point (the API's public URL). */
  readonly publicUrl: () => string;
  readonly log: Log;
}

export interface WebhookSenderOptions {
  /** Deliveries in flight at once, each to its own receiver: a slow one holds one slot only. */
  readonly concurrency: number;
  /** The backstop poll for due retries and for deliveries written by other processes. */
  readonly pollMs: number;
  /** One attempt's limit, for the whole exchange (15 s in production). */
  readonly timeoutMs: number;
}

/**
 * Sends the outbox. Each delivery is leased while it is sent, for longer than an attempt can take,
 * so a sender that dies leaves it due again once the lease runs out: at-least-once, never lost.
 */
export class WebhookSender {
  readonly #deps: WebhookSenderDeps;
  readonly #opts: WebhookSenderOptions;
  readonly #loop: SlotLoop<{ readonly delivery: WebhookDelivery; readonly leaseUntil: number }>;

  constructor(deps: WebhookSenderDeps, opts: WebhookSenderOptions) {
    this.#deps = deps;
    this.#opts = opts;
    this.#loop = new SlotLoop(
      {
        claim: async (max) => {
          try {
            const claimed = await deps.webhooks.claimDue(this.#leaseMs, max);
            return claimed.deliveries.map((delivery) => ({ delivery, leaseUntil: claimed.leaseUntil }));
          } catch (err) {
            deps.log.error({ err: { message: (err as Error).message } }, 'claiming webhook deliveries failed');
            return [];
          }
        },
        run: ({ delivery, leaseUntil }) => this.#send(delivery, leaseUntil),
        failed: ({ delivery }, err) =>
          deps.log.error({ deliveryId: delivery.id, jobId: delivery.jobId, requestId: delivery.requestId ?? undefined, err: { message: (err as Error).message } }, 'webhook delivery failed'),
      },
      { concurrency: opts.concurrency, pollMs: opts.pollMs, clock: deps.clock },
    );
  }

  /** Long enough for any attempt to end before another sender may take the delivery over. */
  get #leaseMs(): number {
    return this.#opts.timeoutMs * 4;
  }

  start(): void {
    this.#loop.start((poke) => this.#deps.signals.onWebhook(poke));
  }

  /**
   * Stops the loop, then sends once more what is due and waits for every send (each ends within
   * its timeout): jobs that ended during the worker's grace period get their webhooks before the
   * process goes. Call it after the worker has stopped.
   */
  async stop(): Promise<void> {
    await this.#loop.stop({ finalFill: true });
  }

  /** Sends what is due now, as far as slots allow, and waits for those sends (tests step with this). */
  async sendDue(): Promise<number> {
    const started = await this.#loop.fill();
    await this.#loop.settled();
    return started;
  }

  async #send(delivery: WebhookDelivery, leaseUntil: number): Promise<void> {
    const { clock, webhooks } = this.#deps;
    // The payload is the job as GET /jobs/{id} showed it when it ended, its URLs made absolute.
    const body = JSON.stringify(presentJob(delivery.payload as unknown as JobView, this.#deps.publicUrl()));
    const startedMs = clock.nowMs();
    // Signed at send time: receivers reject timestamps more than minutes away from their clock.
    const headers = webhookHeaders(await webhooks.signingSecrets(delivery.workspaceId), delivery.id, Math.floor(startedMs / 1000), body);
    const result = await postWebhook(delivery.url, body, { ...headers }, {
      dispatcher: this.#deps.dispatcher,
      timeoutMs: this.#opts.timeoutMs,
      nowMs: () => clock.nowMs(),
    });
    const recorded = await webhooks.record(delivery, leaseUntil, result, startedMs);
    const fields = { deliveryId: delivery.id, jobId: delivery.jobId, requestId: delivery.requestId ?? undefined, attempt: delivery.attempts + 1, outcome: result.outcome, status: result.status };
    if (!recorded) this.#deps.log.warn(fields, 'webhook attempt not recorded: another sender took the delivery over');
    else if (result.outcome === 'delivered') this.#deps.log.info(fields, 'webhook delivered');
    else this.#deps.log.warn({ ...fields, error: result.error }, 'webhook not delivered');
  }
}
