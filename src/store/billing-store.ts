import type { MicroUsd } from '../domain/money.js';
import type { Micros } from '../lib/time.js';

export type LedgerKind = 'top_up' | 'hold' | 'charge' | 'release';

export interface LedgerEntry {
  readonly id: string;
  readonly workspaceId: string;
  readonly kind: LedgerKind;
  /** Always positive; `kind` says which way it moves the balance. */
  readonly amountMicros: MicroUsd;
  readonly jobId: string | null;
  readonly jobType: string | null;
  readonly at: Micros;
  readonly createdBy: string | null;
}

export interface Balance {
  /** Top-ups minus charges. */
  readonly balanceMicros: MicroUsd;
  /** Holds of jobs in flight, not yet charged or released. */
  readonly heldMicros: MicroUsd;
}

export interface NewTopUp {
  readonly workspaceId: string;
  readonly amountMicros: MicroUsd;
  readonly createdBy: string;
  readonly now: Micros;
}

export interface NewHold {
  readonly workspaceId: string;
  readonly jobId: string;
  readonly jobType: string;
  readonly amountMicros: MicroUsd;
  readonly now: Micros;
}

/** One job's hold in a batch of holds (`BillingStore.holdMany`). */
export interface JobHold {
  readonly jobId: string;
  readonly jobType: string;
  readonly amountMicros: MicroUsd;
}

export interface ChargeQuery {
  readonly workspaceId: string;
  /** Charges at or after this instant. */
  readonly from: Micros;
  /** Charges strictly before this instant. */
  readonly before: Micros;
  readonly limit: number;
}

export interface ChargeSumQuery {
  readonly workspaceId: string;
  /** Charges at or after this instant. */
  readonly from: Micros;
  /** Charges strictly before this instant. */
  readonly before: Micros;
  /** One sum per day: days start at UTC midnight moved by `offset` (microseconds east of UTC). */
  readonly byDay?: { readonly offset: Micros };
  /** One sum per job type (model path). */
  readonly byModel: boolean;
  /** One sum per engine that took the job (job_routes; null for a job without a recorded route) and job type. */
  readonly byEngine?: boolean;
  /** One sum per tag of the jobs (job_tags): a job with two tags is in two groups, one without any in the null one. */
  readonly byTag?: boolean;
}

/** The charges of one group of a ChargeSumQuery: only the keys it was grouped by are set. */
export interface ChargeSum {
  /** Days since 1970-01-01 in the query's offset. */
  readonly day?: number;
  readonly model?: string;
  /** With byEngine: the engine the job's route names, null when it has none (`model` is then set too). */
  readonly engine?: string | null;
  /** With byTag: the tag, null for the jobs without tags. */
  readonly tag?: string | null;
  readonly jobs: number;
  readonly amountMicros: MicroUsd;
}

/**
 * The ledger. Each write appends one entry and moves the workspace's running totals in the same
 * statement sequence; call them inside the transaction that changes the job, so the money and the
 * status commit together.
 */
export interface BillingStore {
  getBalance(workspaceId: string): Promise<Balance>;
  topUp(input: NewTopUp): Promise<Balance>;
  /** Holds `amountMicros` if the available balance (balance minus holds) covers it; else undefined. */
  hold(input: NewHold): Promise<Balance | undefined>;
  /**
   * Holds every job's price if the available balance covers their sum, one entry per job, in few
   * statements (a batch of creates); false, and nothing written, when it does not.
   */
  holdMany(workspaceId: string, holds: readonly JobHold[], now: Micros): Promise<boolean>;
  /** The workspace's totals; undefined before its first top-up (nothing can be held then, not even zero). */
  findBalance(workspaceId: string): Promise<Balance | undefined>;
  /**
   * Ends the job's hold as a charge, at a time strictly later than the workspace's previous
   * charge: of the hold's amount, or of `amountMicros` (a metered job's real cost) when given,
   * never more than the hold; the rest of the hold is given back as a release entry of the same
   * job, so hold = charge + release. Undefined (and nothing written) when the job has no open hold.
   */
  charge(jobId: string, now: Micros, amountMicros?: MicroUsd): Promise<LedgerEntry | undefined>;
  /** Gives the job's hold back. Undefined (and nothing written) when the job has no open hold. */
  release(jobId: string, now: Micros): Promise<LedgerEntry | undefined>;
  /** The job's entries (its hold, and its charge or release or both once it ended), in no set order. */
  entriesOfJob(jobId: string): Promise<LedgerEntry[]>;
  /** Every entry of the workspace, oldest first (entries of one instant in no set order). */
  listEntries(workspaceId: string): Promise<LedgerEntry[]>;
  /** Charges in [from, before), newest first. */
  listCharges(query: ChargeQuery): Promise<LedgerEntry[]>;
  /**
   * The charges in [from, before) counted and summed in the database, one row per group (none
   * for a group without charges; without grouping, one row, of zeros when there is no charge),
   * in no set order.
   */
  sumCharges(query: ChargeSumQuery): Promise<ChargeSum[]>;
}
