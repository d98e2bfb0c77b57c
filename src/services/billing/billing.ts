// Room services/billing/: the USD balance in integer micro-USD: holds, charges and releases of jobs, top-ups, prices
// of requests, and the usage report.
// May import from services/: identity, common; test/unit/layers.test.ts holds the order.
import type { Clock } from '../../lib/clock.js';
import { MICROS_PER_USD, formatUsd, parseUsd } from '../../domain/money.js';
import type { MicroUsd } from '../../domain/money.js';
import type { Usage } from '../../domain/usage.js';
import { formatMicros, msToMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import type { Balance, LedgerEntry } from '../../store/billing-store.js';
import type { LockedWorkspace, Store, StoreTx, Workspace } from '../../store/store.js';
import type { PriceTable } from '../../models/prices.js';
import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { normalizeEmail } from '../identity/identity.js';
import type { AuthContext, IdentityService } from '../identity/identity.js';
import type { TerminalStatus } from '../../domain/states.js';

/** Spec section 8: a top-up is a custom amount from $5 to $10,000, in cents. */
export const TOP_UP_MIN_MICROS = 5 * MICROS_PER_USD;
export const TOP_UP_MAX_MICROS = 10_000 * MICROS_PER_USD;

/** Usage reports compute units at this rate: 1 compute unit = $0.01 (docs/decisions.md). */
export const MICROS_PER_COMPUTE_UNIT = 10_000;

/** Without `start`, the usage window is the last 30 days. */
const USAGE_DEFAULT_WINDOW_US = 30 * 86_400 * 1_000_000;

/** The spec's billing explanation (section 7) for a 402. */
const BALANCE_EXPLANATION =
  "The API balance is separate from the workspace's compute-unit balance in the web application and must be topped up on its own; " +
  'a workspace owner can add API balance (mediagen admin balance add). Jobs already running are not affected.';

export interface UsageQuery {
  /** Window start, inclusive; default 30 days before `end` (or before now). */
  readonly start?: Micros;
  /** Window end, exclusive; default none (everything completed until now). */
  readonly end?: Micros;
  /** Only charges strictly before this instant (the previous page's `next_cursor`). */
  readonly before?: Micros;
  readonly limit: number;
}

/** The same window as the usage report's. */
export interface UsageSummaryQuery extends Pick<UsageQuery, 'start' | 'end'> {
  /** Each grouping at most once; none: the total only. */
  readonly groupBy: readonly UsageGrouping[];
  /** Where days start, in minutes east of UTC (-14:00 to +14:00); default 0, UTC days. */
  readonly utcOffsetMinutes?: number;
}

/** A summary grouped by day covers at most this many days (ten years), so its answer stays bounded. */
export const USAGE_SUMMARY_MAX_DAYS = 3660;

/** GET /usage's and GET /usage/summary's views: declared once, as schemas (usage-view.ts). */
import type { UsageGroup, UsageGrouping, UsageItem, UsagePage, UsageSummary } from './usage-view.js';
import { pageOf } from '../common/paging.js';
export type { UsageGroup, UsageGrouping, UsageItem, UsagePage, UsageSummary };

/** What `mediagen admin balance show` reports. */
export interface BalanceReport {
  workspace_id: string;
  balance_usd: string;
  held_usd: string;
}

/** micro-USD / 10,000: at most four decimal places, which a double prints exactly as written. */
export function computeUnits(micros: MicroUsd): number {
  return micros / MICROS_PER_COMPUTE_UNIT;
}

/**
 * Money rules: the price of a request, the hold placed when a job is admitted, the charge or
 * release when it ends, top-ups and the usage report. The ledger writes happen inside the caller's
 * transaction (the one that changes the job), so money and status never disagree.
 */
export class BillingService {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #prices: PriceTable;
  readonly #identity: IdentityService;
  readonly #engineOf: (model: string) => string | undefined;

  /** `engineOf`: the engine a model is bound to now (its chain's first), for usage by engine of jobs without a recorded route. */
  constructor(store: Store, clock: Clock, prices: PriceTable, identity: IdentityService, engineOf: (model: string) => string | undefined = () => undefined) {
    this.#store = store;
    this.#clock = clock;
    this.#prices = prices;
    this.#identity = identity;
    this.#engineOf = engineOf;
  }

  #now(): Micros {
    return msToMicros(this.#clock.nowMs());
  }

  priceOf(model: string, request: Readonly<Record<string, unknown>>): MicroUsd {
    const price = this.#prices.priceOf(model, request);
    if (price === undefined) throw new Error(`no price for ${model}`);
    return price;
  }

  /**
   * What a completed job of a metered model is charged for what it made (`usage`); undefined for
   * a model priced up front, whose job is charged its hold.
   */
  chargeOf(model: string, request: Readonly<Record<string, unknown>>, usage: Usage): MicroUsd | undefined {
    return this.#prices.chargeOf(model, request, usage);
  }

  /**
   * Admission decides on a balance read under the workspace lock (`QueueStore.lockForAdmission`):
   * the available money, or undefined when nothing can be held (no top-up yet).
   */
  available(balance: Balance | undefined): MicroUsd | undefined {
    return balance && balance.balanceMicros - balance.heldMicros;
  }

  /** The 402 of a job whose price the available balance (after `heldBefore` of this batch) does not cover. */
  insufficient(price: MicroUsd, balance: Balance | undefined, heldBefore: MicroUsd): DomainError {
    const balanceMicros = balance?.balanceMicros ?? 0;
    const heldMicros = (balance?.heldMicros ?? 0) + heldBefore;
    return new DomainError(
      'insufficient_balance',
      `insufficient API balance: this request costs $${formatUsd(price)} and the workspace has $${formatUsd(balanceMicros - heldMicros)} available ` +
        `($${formatUsd(heldMicros)} of its $${formatUsd(balanceMicros)} balance is held for jobs in progress)`,
      { fields: { message: BALANCE_EXPLANATION } },
    );
  }

  /**
   * In the admission transaction, under the workspace lock that `available` was read under: holds
   * the admitted jobs' prices, one entry each. The guarded write cannot fail then; if it does, the
   * money moved without the lock, and the whole transaction is refused.
   */
  async hold(tx: StoreTx, lock: LockedWorkspace, jobs: readonly { jobId: string; type: string; price: MicroUsd }[], now: Micros): Promise<void> {
    const holds = jobs.map((j) => ({ jobId: j.jobId, jobType: j.type, amountMicros: j.price }));
    if (!(await tx.billing.holdMany(lock.workspaceId, holds, now))) throw new Error(`the balance of workspace ${lock.workspaceId} moved under its lock`);
  }

  /**
   * In the transaction that ends the job (its workspace locked: `lock` is the job's workspace):
   * completed jobs are charged their hold, or `chargeMicros` (a metered job's cost, never more
   * than the hold: the rest is released); other jobs are released.
   */
  settle(
    tx: StoreTx,
    _lock: LockedWorkspace,
    jobId: string,
    status: TerminalStatus,
    now: Micros,
    chargeMicros?: MicroUsd,
  ): Promise<LedgerEntry | undefined> {
    return status === 'completed' ? tx.billing.charge(jobId, now, chargeMicros) : tx.billing.release(jobId, now);
  }

  /** Owners only; `usd` is a decimal amount in cents, from $5.00 to $10,000.00. */
  async topUp(workspace: string, usd: string, asEmail: string): Promise<BalanceReport> {
    const amount = parseUsd(usd, 2);
    if (amount === undefined || amount < TOP_UP_MIN_MICROS || amount > TOP_UP_MAX_MICROS) {
      throw invalid(`--usd must be an amount in dollars and cents from 5.00 to 10000.00, got '${usd}'`);
    }
    const ws = await this.#identity.workspace(workspace);
    await this.#identity.requireRole(ws, asEmail, ['owner'], 'add API balance');
    const balance = await this.#store.billing.topUp({ workspaceId: ws.id, amountMicros: amount, createdBy: normalizeEmail(asEmail), now: this.#now() });
    return report(ws, balance);
  }

  async show(workspace: string): Promise<BalanceReport> {
    const ws = await this.#identity.workspace(workspace);
    return report(ws, await this.#store.billing.getBalance(ws.id));
  }

  /** The workspace's charged jobs in the window, newest first; survives the jobs' deletion. */
  async usage(auth: AuthContext, query: UsageQuery): Promise<UsagePage> {
    const { start, end } = this.#usageWindow(query);
    const before = query.before === undefined ? end : Math.min(end, query.before);
    const rows = await this.#store.billing.listCharges({ workspaceId: auth.workspace.id, from: start, before, limit: query.limit + 1 });
    const { page, next_cursor } = pageOf(rows, query.limit, (e) => e.at);
    return {
      items: page.map((e) => ({
        job_id: e.jobId!,
        type: e.jobType!,
        completed_at: formatMicros(e.at),
        cost_usd: formatUsd(e.amountMicros),
        compute_units: computeUnits(e.amountMicros),
      })),
      next_cursor,
    };
  }

  /**
   * The charges of the same window as `usage`, counted and summed by the store (never read row
   * by row), in total and by any of day, model, engine and tag; the groups add up to the total,
   * except by tag (a job with two tags is in two groups): the total is then summed on its own.
   */
  async usageSummary(auth: AuthContext, query: UsageSummaryQuery): Promise<UsageSummary> {
    const { start, end } = this.#usageWindow(query);
    const byDay = query.groupBy.includes('day');
    const byModel = query.groupBy.includes('model');
    const byEngine = query.groupBy.includes('engine');
    const byTag = query.groupBy.includes('tag');
    if (new Set(query.groupBy).size !== query.groupBy.length) throw invalid(`query parameter 'group_by' must name each grouping at most once`);
    // Which engines a server has is the operator's business, as in a job's details.
    if (byEngine) await this.#identity.requireRole(auth.workspace, auth.memberEmail, ['owner', 'admin'], 'group usage by engine');
    const offset = (query.utcOffsetMinutes ?? 0) * 60_000_000;
    if (byDay && Math.min(end, this.#now()) - start > USAGE_SUMMARY_MAX_DAYS * 86_400_000_000) {
      throw invalid(`query parameter 'start' must be at most ${USAGE_SUMMARY_MAX_DAYS} days before 'end' (or now) when grouping by day`);
    }
    const window = { workspaceId: auth.workspace.id, from: start, before: end };
    const rows = await this.#store.billing.sumCharges({ ...window, ...(byDay ? { byDay: { offset } } : {}), byModel, byEngine, byTag });
    // A job without a recorded route (its model has one engine, or it ran before routing or on a
    // remote worker) counts for the engine its model is bound to now; `unknown` when none is.
    const merged = new Map<string, { day?: number; model?: string; engine?: string; tag?: string | null; jobs: number; micros: number }>();
    for (const r of rows) {
      const engine = byEngine ? (r.engine ?? this.#engineOf(r.model ?? '') ?? 'unknown') : undefined;
      const key = JSON.stringify([r.day, byModel ? r.model : undefined, engine, r.tag]);
      const group = merged.get(key) ?? {
        ...(r.day !== undefined ? { day: r.day } : {}),
        ...(byModel ? { model: r.model ?? '' } : {}),
        ...(engine !== undefined ? { engine } : {}),
        ...(byTag ? { tag: r.tag ?? null } : {}),
        jobs: 0,
        micros: 0,
      };
      group.jobs += r.jobs;
      group.micros += r.amountMicros;
      merged.set(key, group);
    }
    const groups = [...merged.values()]
      .filter((r) => r.jobs > 0)
      .sort((a, b) => (a.day ?? 0) - (b.day ?? 0) || codePointCompare(a.model ?? '', b.model ?? '') || codePointCompare(a.engine ?? '', b.engine ?? '') || tagCompare(a.tag, b.tag))
      .map((r): UsageGroup => ({
        ...(r.day !== undefined ? { day: new Date(r.day * 86_400_000).toISOString().slice(0, 10) } : {}),
        ...(r.model !== undefined ? { model: r.model } : {}),
        ...(r.engine !== undefined ? { engine: r.engine } : {}),
        ...(r.tag !== undefined ? { tag: r.tag } : {}),
        ...sumView(r.jobs, r.micros),
      }));
    // By tag, the rows count a job once per tag: the total is the ledger's own, asked without grouping.
    const summed = byTag ? await this.#store.billing.sumCharges({ ...window, byModel: false }) : rows;
    const total = summed.reduce((t, r) => ({ jobs: t.jobs + r.jobs, micros: t.micros + r.amountMicros }), { jobs: 0, micros: 0 });
    return { total: sumView(total.jobs, total.micros), groups: query.groupBy.length > 0 ? groups : [] };
  }

  /** The usage report's window: `start` inclusive, `end` exclusive, with their defaults. */
  #usageWindow(query: { readonly start?: Micros; readonly end?: Micros }): { start: Micros; end: Micros } {
    // Without `end`, nothing completed so far is cut off (a charge may be a few microseconds
    // ahead of the clock: charge times are made strictly increasing).
    const end = query.end ?? Number.MAX_SAFE_INTEGER;
    const start = query.start ?? (query.end ?? this.#now()) - USAGE_DEFAULT_WINDOW_US;
    if (start > end) throw invalid(`query parameter 'start' must not be later than 'end'`);
    return { start, end };
  }
}

function sumView(jobs: number, micros: MicroUsd): { jobs: number; cost_micros: number; cost_usd: string; compute_units: number } {
  return { jobs, cost_micros: micros, cost_usd: formatUsd(micros), compute_units: computeUnits(micros) };
}

function codePointCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Tags in code point order, the untagged (null) last. */
function tagCompare(a: string | null | undefined, b: string | null | undefined): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return codePointCompare(a ?? '', b ?? '');
}

function report(ws: Workspace, b: Balance): BalanceReport {
  return { workspace_id: ws.id, balance_usd: formatUsd(b.balanceMicros), held_usd: formatUsd(b.heldMicros) };
}
