import { DomainError } from '../../domain/error-catalogue.js';
import { formatUsd } from '../../domain/money.js';
import type { MicroUsd } from '../../domain/money.js';
import { allowsModel, countsJobs, periodStart } from '../../domain/token-limits.js';
import type { TokenLimits } from '../../domain/token-limits.js';
import type { Micros } from '../../lib/time.js';
import type { StoreTx } from '../../store/store.js';
import type { TokenJob, TokenUsage } from '../../store/token-budget-store.js';
import type { AuthContext } from '../identity/identity.js';

/** The 402's `message` (the balance's 402 explains the API balance there; spec 7). */
const BUDGET_EXPLANATION =
  'This API token was created with its own spend limit, apart from the workspace balance. Its spend comes back as its jobs fail or when its period ' +
  '(a UTC day or month) turns; the limit itself cannot change: an owner or admin can create another token (POST /tokens).';

const PERIOD_WORDS = { day: 'today (UTC)', month: 'this month (UTC)', total: 'in all' } as const;

/**
 * An API token's own limits at admission (issue 40; domain/token-limits.ts), for one batch of
 * creates: read under the workspace lock admission holds, which every hold, charge and release of
 * the workspace's jobs takes too, so two creates with one token can never both take its last
 * dollar or slot. A token's usage is read once per batch and carried from request to request, as
 * the balance is.
 */
export class TokenAdmission {
  readonly #tx: StoreTx;
  readonly #now: Micros;
  readonly #usage = new Map<string, { spentMicros: MicroUsd; openJobs: number }>();
  readonly #jobs: TokenJob[] = [];
  readonly #retryAfterSeconds: number;

  constructor(tx: StoreTx, now: Micros, retryAfterSeconds: number) {
    this.#tx = tx;
    this.#now = now;
    this.#retryAfterSeconds = retryAfterSeconds;
  }

  /** Refuses the job if its token may not create it now: a model outside its patterns (403), past its spend (402), past its jobs in flight (429). */
  async check(auth: AuthContext, type: string, price: MicroUsd): Promise<void> {
    const limits = auth.token.limits;
    if (!limits) return;
    if (!allowsModel(limits, type)) {
      throw new DomainError('model_not_allowed', `this API token may create jobs of ${limits.models!.map((p) => `'${p}'`).join(', ')} only, not of '${type}'`, {
        fields: { code: 'model_not_allowed' },
      });
    }
    if (!countsJobs(limits)) return;
    const used = await this.#used(auth.token.id, limits);
    if (limits.spendLimitMicros !== undefined && used.spentMicros + price > limits.spendLimitMicros) {
      const period = limits.spendPeriod ?? 'total';
      throw new DomainError(
        'token_budget_exceeded',
        `this API token's spend limit is $${formatUsd(limits.spendLimitMicros)} ${period === 'total' ? 'in all' : `a ${period}`}: $${formatUsd(used.spentMicros)} is charged or held ` +
          `${PERIOD_WORDS[period]} and this request costs $${formatUsd(price)}`,
        { fields: { message: BUDGET_EXPLANATION, code: 'token_budget_exceeded' } },
      );
    }
    if (limits.maxConcurrentJobs !== undefined && used.openJobs >= limits.maxConcurrentJobs) {
      throw new DomainError('too_many_jobs', `too many jobs: this API token may have ${limits.maxConcurrentJobs} jobs in flight and has ${used.openJobs}; retry when one ends`, {
        retryAfterSeconds: this.#retryAfterSeconds,
      });
    }
  }

  /** The job passed every check and is admitted: it counts against its token from now on. */
  admitted(auth: AuthContext, jobId: string, price: MicroUsd): void {
    if (!countsJobs(auth.token.limits)) return;
    const used = this.#usage.get(auth.token.id)!;
    used.spentMicros += price;
    used.openJobs += 1;
    this.#jobs.push({ jobId, tokenId: auth.token.id, createdAt: this.#now });
  }

  /** Records the admitted jobs of limited tokens, in the admission transaction. */
  async write(): Promise<void> {
    await this.#tx.tokenBudgets.recordJobs(this.#jobs);
  }

  async #used(tokenId: string, limits: TokenLimits): Promise<{ spentMicros: MicroUsd; openJobs: number }> {
    let used = this.#usage.get(tokenId);
    if (!used) {
      const read: TokenUsage = await this.#tx.tokenBudgets.usage(tokenId, periodStart(limits.spendPeriod ?? 'total', this.#now));
      used = { ...read };
      this.#usage.set(tokenId, used);
    }
    return used;
  }
}
