import { matchesGlob } from '../lib/glob.js';
import type { Micros } from '../lib/time.js';
import type { MicroUsd } from './money.js';

/** How far back a token's spend limit looks: the current UTC day, the current UTC month, or ever. */
export type SpendPeriod = 'day' | 'month' | 'total';
export const SPEND_PERIODS: readonly SpendPeriod[] = ['day', 'month', 'total'];

/**
 * An API token's own limits (issue 40), set when it is made and never changed: a spend limit over
 * a period, the models it may create jobs of, and how many of its jobs may be in flight. Each
 * absent field is no limit; the workspace's balance and limits apply as well, whichever is tighter.
 */
export interface TokenLimits {
  readonly spendLimitMicros?: MicroUsd;
  /** With spendLimitMicros only; default `total`. */
  readonly spendPeriod?: SpendPeriod;
  /** Model path patterns (lib/glob.ts); a job's type must match one. */
  readonly models?: readonly string[];
  readonly maxConcurrentJobs?: number;
}

const DAY_US = 86_400_000_000;

/**
 * When the period that holds `now` began: UTC midnight, the first of the UTC month, or the epoch.
 * Spend counts by when a job was admitted (its hold), so a job admitted at 23:59 belongs to its day.
 */
export function periodStart(period: SpendPeriod, now: Micros): Micros {
  if (period === 'total') return 0;
  if (period === 'day') return Math.floor(now / DAY_US) * DAY_US;
  const d = new Date(Math.floor(now / 1000));
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) * 1000;
}

/** Whether the token may create jobs of `type` (a model path, or `node-app/<slug>`). */
export function allowsModel(limits: TokenLimits, type: string): boolean {
  return limits.models === undefined || limits.models.some((p) => matchesGlob(p, type));
}

/** Whether the token's jobs must be counted at all: only a spend or concurrency limit needs them. */
export const countsJobs = (limits: TokenLimits | null): limits is TokenLimits =>
  limits !== null && (limits.spendLimitMicros !== undefined || limits.maxConcurrentJobs !== undefined);
