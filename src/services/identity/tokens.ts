import { formatMicros, formatMicrosOrNull } from '../../lib/time.js';
import { formatUsd, parseUsd } from '../../domain/money.js';
import { invalid } from '../../domain/error-catalogue.js';
import { GLOB_SYNTAX, isGlobPattern } from '../../lib/glob.js';
import { SPEND_PERIODS } from '../../domain/token-limits.js';
import type { SpendPeriod, TokenLimits } from '../../domain/token-limits.js';
import { WORKSPACE_LIMITS } from '../../config/options.js';
import { TOKEN_PATTERNS_MAX } from './token-limit-views.js';
import type { TokenLimitsView, TokenSpendView } from './token-limit-views.js';
import { bodyValidator } from '../../models/validation.js';
import type { BodyValidator } from '../../models/validation.js';
import type { ApiToken, Role } from '../../store/store.js';
import type { AuthContext, IdentityService } from './identity.js';
import { ApiTokenRequest } from './workspace-views.js';
import type { ApiTokenList, ApiTokenView, CreatedApiToken } from './workspace-views.js';

/** Who manages API tokens (spec 5.3): the same roles as `mediagen admin token create|revoke`. */
const MANAGERS: readonly Role[] = ['owner', 'admin'];

const validateRequest: BodyValidator = bodyValidator(ApiTokenRequest);

/**
 * The limit fields of POST /tokens (and of `mediagen admin token create`'s options, named alike) as
 * a token's limits; null when none is set. Checked here in full, since the CLI has no schema.
 */
export function tokenLimitsOf(fields: {
  spend_limit_usd?: string;
  spend_period?: string;
  models?: readonly string[];
  max_concurrent_jobs?: number;
}): TokenLimits | null {
  const { spend_limit_usd: usd, spend_period: period, models, max_concurrent_jobs: maxJobs } = fields;
  if (period !== undefined && usd === undefined) throw invalid("'spend_period' needs 'spend_limit_usd': it says what the spend limit covers");
  const micros = usd === undefined ? undefined : parseUsd(usd);
  if (usd !== undefined && micros === undefined) throw invalid(`'spend_limit_usd' must be an amount in USD with at most six decimals, such as '25.00', got '${usd.slice(0, 40)}'`);
  if (period !== undefined && !(SPEND_PERIODS as readonly string[]).includes(period)) throw invalid(`'spend_period' must be one of ${SPEND_PERIODS.join(', ')}, got '${period.slice(0, 40)}'`);
  if (models !== undefined && (models.length === 0 || models.length > TOKEN_PATTERNS_MAX)) throw invalid(`'models' must name 1 to ${TOKEN_PATTERNS_MAX} patterns`);
  const bad = models?.find((p) => !isGlobPattern(p));
  if (bad !== undefined) throw invalid(`'models': '${bad.slice(0, 200)}' is not a model pattern; a pattern is ${GLOB_SYNTAX}`);
  const most = WORKSPACE_LIMITS.maxConcurrentJobs.max;
  if (maxJobs !== undefined && (!Number.isSafeInteger(maxJobs) || maxJobs < 1 || maxJobs > most)) throw invalid(`'max_concurrent_jobs' must be a whole number from 1 to ${most}`);
  const limits: TokenLimits = {
    ...(micros !== undefined ? { spendLimitMicros: micros, spendPeriod: (period ?? 'total') as SpendPeriod } : {}),
    ...(models !== undefined ? { models: [...new Set(models)] } : {}),
    ...(maxJobs !== undefined ? { maxConcurrentJobs: maxJobs } : {}),
  };
  return Object.keys(limits).length > 0 ? limits : null;
}

/** A token's limits as the API and the admin CLI show them. */
export function limitsView(l: TokenLimits | null): TokenLimitsView | null {
  if (!l) return null;
  return {
    spend_limit_usd: l.spendLimitMicros === undefined ? null : formatUsd(l.spendLimitMicros),
    spend_period: l.spendLimitMicros === undefined ? null : (l.spendPeriod ?? 'total'),
    models: l.models ? [...l.models] : null,
    max_concurrent_jobs: l.maxConcurrentJobs ?? null,
  };
}

type Usage = Awaited<ReturnType<IdentityService['tokenUsage']>>;

/** A token as the API shows it: never its hash; `current` when it is the caller's own. */
function toTokenView(t: ApiToken, auth: AuthContext, usage?: Usage): ApiTokenView {
  const spend: TokenSpendView | null = usage
    ? { period_start: formatMicros(usage.since), spent_usd: formatUsd(usage.spentMicros), jobs_in_flight: usage.openJobs }
    : null;
  return {
    id: t.id,
    name: t.name,
    created_by: t.createdBy,
    created_at: formatMicros(t.createdAt),
    last_used_at: formatMicrosOrNull(t.lastUsedAt),
    revoked_at: formatMicrosOrNull(t.revokedAt),
    current: t.id === auth.token.id,
    limits: limitsView(t.limits),
    spend,
  };
}

/**
 * The API's token use cases (GET /tokens, POST /tokens, POST /tokens/{id}/revoke): the caller's
 * workspace and member through IdentityService's operations, which the admin CLI calls with
 * `--workspace` and `--as`. Owners and admins only, as spec 5.3 says of creating tokens; listing
 * is held to the same roles, since the list is what a revocation picks from.
 */
export class TokenService {
  readonly #identity: IdentityService;

  constructor(identity: IdentityService) {
    this.#identity = identity;
  }

  /** Newest first, revoked ones included. */
  async list(auth: AuthContext): Promise<ApiTokenList> {
    await this.#identity.requireRole(auth.workspace, auth.memberEmail, MANAGERS, 'list API tokens');
    const tokens = await this.#identity.listTokens(auth.workspace);
    // Ties (one microsecond) by id, so the order never changes between two reads.
    const newestFirst = [...tokens].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const usages = await Promise.all(newestFirst.map((t) => this.#identity.tokenUsage(t)));
    return { items: newestFirst.map((t, i) => toTokenView(t, auth, usages[i])) };
  }

  /** The new token is the caller's member's: requests with it act with that member's role. Its secret is answered once. */
  async create(auth: AuthContext, body: unknown): Promise<CreatedApiToken> {
    // The role first: a member learns nothing from a body check.
    await this.#identity.requireRole(auth.workspace, auth.memberEmail, MANAGERS, 'create API tokens');
    validateRequest(body);
    const { token, secret } = await this.#identity.createToken(auth.workspace, body.name as string, auth.memberEmail, tokenLimitsOf(body as Parameters<typeof tokenLimitsOf>[0]));
    return { token: toTokenView(token, auth, await this.#identity.tokenUsage(token)), secret };
  }

  /** Idempotent: a revoked token answers with its first revocation time. The caller's own token may be revoked. */
  async revoke(auth: AuthContext, tokenId: string): Promise<ApiTokenView> {
    const token = await this.#identity.revokeToken(auth.workspace, tokenId, auth.memberEmail);
    return toTokenView(token, auth, await this.#identity.tokenUsage(token));
  }
}
