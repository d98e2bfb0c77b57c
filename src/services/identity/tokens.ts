import { formatMicros, formatMicrosOrNull } from '../../lib/time.js';
import { bodyValidator } from '../../models/validation.js';
import type { BodyValidator } from '../../models/validation.js';
import type { ApiToken, Role } from '../../store/store.js';
import type { AuthContext, IdentityService } from './identity.js';
import { ApiTokenRequest } from './workspace-views.js';
import type { ApiTokenList, ApiTokenView, CreatedApiToken } from './workspace-views.js';

/** Who manages API tokens (spec 5.3): the same roles as `mediagen admin token create|revoke`. */
const MANAGERS: readonly Role[] = ['owner', 'admin'];

const validateRequest: BodyValidator = bodyValidator(ApiTokenRequest);

/** A token as the API shows it: never its hash; `current` when it is the caller's own. */
function toTokenView(t: ApiToken, auth: AuthContext): ApiTokenView {
  return {
    id: t.id,
    name: t.name,
    created_by: t.createdBy,
    created_at: formatMicros(t.createdAt),
    last_used_at: formatMicrosOrNull(t.lastUsedAt),
    revoked_at: formatMicrosOrNull(t.revokedAt),
    current: t.id === auth.token.id,
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
    return { items: newestFirst.map((t) => toTokenView(t, auth)) };
  }

  /** The new token is the caller's member's: requests with it act with that member's role. Its secret is answered once. */
  async create(auth: AuthContext, body: unknown): Promise<CreatedApiToken> {
    // The role first: a member learns nothing from a body check.
    await this.#identity.requireRole(auth.workspace, auth.memberEmail, MANAGERS, 'create API tokens');
    validateRequest(body);
    const { token, secret } = await this.#identity.createToken(auth.workspace, body.name as string, auth.memberEmail);
    return { token: toTokenView(token, auth), secret };
  }

  /** Idempotent: a revoked token answers with its first revocation time. The caller's own token may be revoked. */
  async revoke(auth: AuthContext, tokenId: string): Promise<ApiTokenView> {
    return toTokenView(await this.#identity.revokeToken(auth.workspace, tokenId, auth.memberEmail), auth);
  }
}
