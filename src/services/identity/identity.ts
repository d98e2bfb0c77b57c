// Room services/identity/: workspaces, members, roles and API tokens: who a bearer token is (with a short cache), the
// workspace view, and token management.
// May import from services/: nothing in services/ (the lowest room, with common/); test/unit/layers.test.ts holds the order.
import type { Clock } from '../../lib/clock.js';
import { hashToken, isUuid, newId, newToken } from '../../lib/ids.js';
import { MICROS_PER_USD } from '../../domain/money.js';
import { msToMicros } from '../../lib/time.js';
import type { ApiToken, Member, Role, Store, Workspace, WorkspacePatch } from '../../store/store.js';
import { WORKSPACE_LIMITS } from '../../config/options.js';
import { DomainError, forbidden, invalid, notFound } from '../../domain/error-catalogue.js';
import { MAX_PRIORITY } from '../../store/identity-store.js';
import { TokenCache } from './token-cache.js';
import { countsJobs, periodStart } from '../../domain/token-limits.js';
import type { TokenLimits } from '../../domain/token-limits.js';
import type { TokenUsage } from '../../store/token-budget-store.js';
import type { Micros } from '../../lib/time.js';

/** What a valid bearer token resolves to: the API user of one workspace. */
export interface AuthContext {
  readonly workspace: Workspace;
  readonly apiUserId: string;
  /**
   * The member whose token this is (the token's creator): the API acts as one user per workspace
   * (spec 5.5), but a style trained through one member's token is that member's until shared.
   */
  readonly memberEmail: string;
  /** The token the request came with (GET /workspace shows it; GET /tokens marks it `current`). */
  readonly token: { readonly id: string; readonly name: string; readonly limits: TokenLimits | null };
}

export interface IdentityLimits {
  readonly maxConcurrentJobs: number;
  readonly maxBackloggedJobs: number;
}

/** What the zero-setup workspace starts with, so the quick start runs jobs at once: $10.00. */
export const BOOTSTRAP_BALANCE_MICROS = 10 * MICROS_PER_USD;

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;
const BEARER_RE = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i;

/** Longer than any token id (a UUID). */
const MAX_TOKEN_ID = 64;

/** last_used_at is written at most this often per token, to keep reads from becoming writes. */
const TOUCH_INTERVAL_US = 60_000_000;

function checkLimit(name: string, value: number | undefined, bounds: { min: number; max: number }): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < bounds.min || value > bounds.max)) {
    throw invalid(`${name} must be a whole number from ${bounds.min} to ${bounds.max}`);
  }
}

const unauthenticated = (message: string) => new DomainError('unauthenticated', message);

export function normalizeEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL_RE.test(e)) throw invalid(`'${email}' is not an email address`);
  return e;
}

function checkName(name: string, what: string): string {
  const n = name.trim();
  if (n.length === 0 || n.length > 200) throw invalid(`${what} must be 1 to 200 characters`);
  return n;
}

/** Workspaces, members and API tokens (spec section 5), and bearer authentication. */
export class IdentityService {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #defaults: IdentityLimits;
  readonly #tokens: TokenCache;

  /** `tokenCacheTtlMs`: how long a token lookup is reused (default TOKEN_CACHE_TTL_MS; 0: never). */
  constructor(store: Store, clock: Clock, defaults: IdentityLimits, opts: { tokenCacheTtlMs?: number } = {}) {
    this.#store = store;
    this.#clock = clock;
    this.#defaults = defaults;
    this.#tokens = new TokenCache({ ttlMs: opts.tokenCacheTtlMs });
  }

  #now(): number {
    return msToMicros(this.#clock.nowMs());
  }

  /** `authorization` holds every Authorization header of the request: two are ambiguous, not "the first". */
  async authenticate(authorization: string | readonly string[] | undefined): Promise<AuthContext> {
    if (typeof authorization !== 'string' && authorization !== undefined) {
      if (authorization.length > 1) throw unauthenticated('more than one Authorization header; send exactly one');
      authorization = authorization[0];
    }
    if (!authorization) throw unauthenticated('missing Authorization header; send Authorization: Bearer <API_TOKEN>');
    const m = BEARER_RE.exec(authorization);
    if (!m) throw unauthenticated('malformed Authorization header; expected Bearer <API_TOKEN>');
    const hash = hashToken(m[1]!);
    const nowMs = this.#clock.nowMs();
    let owner = this.#tokens.get(hash, nowMs);
    if (!owner) {
      const generation = this.#tokens.generation;
      owner = await this.#store.identity.findTokenByHash(hash);
      if (!owner) throw unauthenticated('invalid API token');
      this.#tokens.set(hash, owner, nowMs, generation);
    }
    if (owner.token.revokedAt !== null) throw unauthenticated('this API token has been revoked');
    if (!owner.workspace.apiAccess) {
      throw new DomainError('api_access_disabled', 'API access is disabled for this workspace; an owner or admin can enable it');
    }
    const now = msToMicros(nowMs);
    if (owner.token.lastUsedAt === null || now - owner.token.lastUsedAt >= TOUCH_INTERVAL_US) {
      // Bookkeeping: a failed write (a lock held too long elsewhere) must not fail the request.
      await this.#store.identity.touchToken(owner.token.id, now, now - TOUCH_INTERVAL_US).catch(() => undefined);
      // The cached lookup must not send every request of the next TTL here again.
      this.#tokens.update(hash, { ...owner, token: { ...owner.token, lastUsedAt: now } });
    }
    return {
      workspace: owner.workspace,
      apiUserId: owner.apiUserId,
      memberEmail: owner.token.createdBy,
      token: { id: owner.token.id, name: owner.token.name, limits: owner.token.limits },
    };
  }

  /**
   * The workspace named by id or name (the admin CLI's --workspace), or the one given: a caller's
   * (AuthContext.workspace), which the API's use cases pass to the same operations as the CLI.
   */
  async workspace(idOrName: string | Workspace): Promise<Workspace> {
    if (typeof idOrName !== 'string') return idOrName;
    const ws = await this.#store.identity.findWorkspace(idOrName);
    if (!ws) throw notFound(`workspace '${idOrName}' not found`);
    return ws;
  }

  /** Every workspace, oldest first (operators only: no API route lists other workspaces). */
  listWorkspaces(): Promise<Workspace[]> {
    return this.#store.identity.listWorkspaces();
  }

  async listMembers(workspace: string | Workspace): Promise<Member[]> {
    const ws = await this.workspace(workspace);
    return this.#store.identity.listMembers(ws.id);
  }

  /** The role of `email` in `ws` now; null when it is not (or no longer) a member. */
  async roleOf(ws: Workspace, email: string): Promise<Role | null> {
    return (await this.#store.identity.getMember(ws.id, normalizeEmail(email)))?.role ?? null;
  }

  /** Refuses `email` unless it is a member of `ws` with one of `roles`; `action` completes "only owners can ...". */
  async requireRole(ws: Workspace, email: string, roles: readonly Role[], action: string): Promise<void> {
    const member = await this.#store.identity.getMember(ws.id, normalizeEmail(email));
    if (!member || !roles.includes(member.role)) {
      const who = member
        ? `${email} is ${member.role === 'admin' ? 'an' : 'a'} ${member.role}`
        : `${email} is not a member of workspace '${ws.name}'`;
      throw forbidden(`only ${roles.map((r) => `${r}s`).join(' and ')} can ${action}; ${who}`);
    }
  }

  async createWorkspace(name: string, ownerEmail: string): Promise<Workspace> {
    // Workspaces are looked up by id or name, so a name must never look like an id.
    if (isUuid(name.trim())) throw invalid('a workspace name must not have the form of a UUID');
    const ws = await this.#store.identity.createWorkspace({
      id: newId(),
      name: checkName(name, 'workspace name'),
      ownerEmail: normalizeEmail(ownerEmail),
      apiUserId: newId(),
      maxConcurrentJobs: this.#defaults.maxConcurrentJobs,
      maxBackloggedJobs: this.#defaults.maxBackloggedJobs,
      now: this.#now(),
    });
    if (!ws) throw invalid(`a workspace named '${name}' already exists`);
    return ws;
  }

  async addMember(workspace: string, email: string, role: string, asEmail: string) {
    if (role !== 'admin' && role !== 'member') throw invalid(`role must be admin or member, not '${role}'`);
    const ws = await this.workspace(workspace);
    await this.requireRole(ws, asEmail, ['owner'], 'add members');
    const e = normalizeEmail(email);
    const existing = await this.#store.identity.getMember(ws.id, e);
    if (existing?.role === 'owner') throw forbidden(`${e} is the owner; an owner's role cannot be changed here`);
    return this.#store.identity.putMember({ workspaceId: ws.id, email: e, role, createdAt: this.#now() });
  }

  /** Returns the token in clear exactly once; only its hash is stored. `limits` are its own (domain/token-limits.ts), fixed for its life. */
  async createToken(workspace: string | Workspace, name: string, asEmail: string, limits: TokenLimits | null = null): Promise<{ token: ApiToken; secret: string }> {
    const ws = await this.workspace(workspace);
    await this.requireRole(ws, asEmail, ['owner', 'admin'], 'create API tokens');
    const secret = newToken();
    const token = await this.#store.identity.insertToken({
      id: newId(),
      workspaceId: ws.id,
      name: checkName(name, 'token name'),
      tokenHash: hashToken(secret),
      createdBy: normalizeEmail(asEmail),
      now: this.#now(),
      limits,
    });
    return { token, secret };
  }

  /** What a token with a spend or concurrency limit has used in its current period; undefined for any other token. */
  async tokenUsage(token: ApiToken): Promise<(TokenUsage & { since: Micros }) | undefined> {
    if (!countsJobs(token.limits)) return undefined;
    const since = periodStart(token.limits.spendPeriod ?? 'total', this.#now());
    return { ...(await this.#store.tokenBudgets.usage(token.id, since)), since };
  }

  /** Every token of the workspace, revoked ones included, oldest first (no role check: the CLI's operator view). */
  async listTokens(workspace: string | Workspace): Promise<ApiToken[]> {
    const ws = await this.workspace(workspace);
    return this.#store.identity.listTokens(ws.id);
  }

  /** Revoking a revoked token answers it with its first revocation time. */
  async revokeToken(workspace: string | Workspace, tokenId: string, asEmail: string): Promise<ApiToken> {
    const ws = await this.workspace(workspace);
    await this.requireRole(ws, asEmail, ['owner', 'admin'], 'revoke API tokens');
    // No token id is that long (they are UUIDs): not looked up, and not echoed back at length.
    if (tokenId.length > MAX_TOKEN_ID) throw notFound(`no token of workspace '${ws.name}' has that id`);
    const token = await this.#store.identity.revokeToken(ws.id, tokenId, this.#now());
    if (!token) throw notFound(`token '${tokenId}' not found in workspace '${ws.name}'`);
    // At once in this process; other processes within TOKEN_CACHE_TTL_MS.
    this.#tokens.forget({ tokenId: token.id });
    return token;
  }

  async setWorkspace(workspace: string, patch: WorkspacePatch): Promise<Workspace> {
    const ws = await this.workspace(workspace);
    checkLimit('max-concurrent-jobs', patch.maxConcurrentJobs, WORKSPACE_LIMITS.maxConcurrentJobs);
    checkLimit('max-backlogged-jobs', patch.maxBackloggedJobs, WORKSPACE_LIMITS.maxBackloggedJobs);
    checkLimit('priority', patch.priority, { min: 0, max: MAX_PRIORITY });
    const updated = (await this.#store.identity.updateWorkspace(ws.id, patch))!;
    this.#tokens.forget({ workspaceId: ws.id });
    return updated;
  }

  /**
   * On a store with no workspace: workspace `default`, owner owner@localhost, one API token and a
   * $10.00 API balance, all in one transaction, so a crash cannot leave a workspace whose token
   * was never shown.
   */
  async bootstrap(startingBalanceMicros = BOOTSTRAP_BALANCE_MICROS): Promise<{ workspace: Workspace; secret: string } | undefined> {
    if ((await this.#store.identity.countWorkspaces()) > 0) return undefined;
    const owner = 'owner@localhost';
    const secret = newToken();
    const now = this.#now();
    const workspace = await this.#store.transaction(async (tx) => {
      const ws = await tx.identity.createWorkspace({ id: newId(), name: 'default', ownerEmail: owner, apiUserId: newId(), ...this.#defaults, now });
      // Another process starting on the same empty store got there first.
      if (!ws) return undefined;
      await tx.identity.insertToken({ id: newId(), workspaceId: ws.id, name: 'default', tokenHash: hashToken(secret), createdBy: owner, now });
      if (startingBalanceMicros > 0) await tx.billing.topUp({ workspaceId: ws.id, amountMicros: startingBalanceMicros, createdBy: 'bootstrap', now });
      return ws;
    });
    return workspace && { workspace, secret };
  }
}
