import { formatUsd } from '../../domain/money.js';
import type { Store } from '../../store/store.js';
import type { AuthContext, IdentityService } from './identity.js';
import type { WorkspaceView } from './workspace-views.js';

/**
 * GET /workspace: who the calling token acts as (its workspace, its member and that member's role
 * now) and what the workspace can spend. Any role may read it: it is what a client shows before
 * it knows what it may do.
 */
export class WorkspaceService {
  readonly #store: Store;
  readonly #identity: IdentityService;

  constructor(store: Store, identity: IdentityService) {
    this.#store = store;
    this.#identity = identity;
  }

  async describe(auth: AuthContext): Promise<WorkspaceView> {
    const ws = auth.workspace;
    const [role, balance] = await Promise.all([this.#identity.roleOf(ws, auth.memberEmail), this.#store.billing.getBalance(ws.id)]);
    return {
      id: ws.id,
      name: ws.name,
      role,
      member_email: auth.memberEmail,
      token: { id: auth.token.id, name: auth.token.name },
      balance_usd: formatUsd(balance.balanceMicros),
      held_usd: formatUsd(balance.heldMicros),
      available_usd: formatUsd(balance.balanceMicros - balance.heldMicros),
      limits: { max_concurrent_jobs: ws.maxConcurrentJobs, max_backlogged_jobs: ws.maxBackloggedJobs },
    };
  }
}
