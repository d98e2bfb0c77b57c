import type { MicroUsd } from '../domain/money.js';
import type { Micros } from '../lib/time.js';

/** One job of a token with limits, recorded in the transaction that admits (and holds for) it. */
export interface TokenJob {
  readonly jobId: string;
  readonly tokenId: string;
  readonly createdAt: Micros;
}

/** What a token with limits has used: read under its workspace's lock, which every job's hold and end take. */
export interface TokenUsage {
  /** Holds minus releases of its jobs admitted since the period's start: charged, or held while in flight. */
  readonly spentMicros: MicroUsd;
  /** Its jobs whose hold is still open (neither charged nor released). */
  readonly openJobs: number;
}

/** The jobs of tokens with their own limits (domain/token-limits.ts); their money is the ledger's. */
export interface TokenBudgetStore {
  recordJobs(jobs: readonly TokenJob[]): Promise<void>;
  usage(tokenId: string, since: Micros): Promise<TokenUsage>;
}
