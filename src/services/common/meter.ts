import { NODE_APP_JOB_PREFIX } from '../../domain/node-app-plan.js';
import type { MicroUsd } from '../../domain/money.js';
import type { JobRecord } from '../../store/store.js';

/** How one webhook attempt ended, as its delivery records it (an attempt that will be retried: `retry`). */
export type WebhookAttemptOutcome = 'delivered' | 'retry' | 'exhausted' | 'gone' | 'refused';

/**
 * What the services tell the process's metrics (docs/operations.md, "Metrics"). Each call comes
 * once the change it reports has committed, so a rolled-back end or creation counts nothing and a
 * job's end is counted once, by the process whose transaction ended it (remote workers' ends
 * included: they go through the same services). The methods never throw and never block.
 */
export interface Meter {
  /** A job was admitted (queued or backlogged). */
  jobCreated(type: string): void;
  /** A job's first claim committed (the one that set `startedAt`); `job` is the row as claimed. */
  jobClaimed(job: JobRecord): void;
  /** A job ended; `chargedMicros` is what its completion charged (null: nothing charged). */
  jobEnded(job: JobRecord, chargedMicros: MicroUsd | null): void;
  /** A webhook attempt was recorded. */
  webhookAttempt(outcome: WebhookAttemptOutcome): void;
}

/** No metrics: tests, `mediagen admin`, and servers with neither `metrics_port` nor `metrics_token`. */
export const noMeter: Meter = Object.freeze({
  jobCreated: () => undefined,
  jobClaimed: () => undefined,
  jobEnded: () => undefined,
  webhookAttempt: () => undefined,
});

/**
 * A job type as a metric label: a node-app job's type names the app (`node-app/<slug>`), which
 * users create at will, so all of them share one label and a series cannot be minted per app.
 */
export function modelLabel(type: string): string {
  return type.startsWith(NODE_APP_JOB_PREFIX) ? 'node-app' : type;
}
