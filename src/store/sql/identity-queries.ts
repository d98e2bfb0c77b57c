import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Database, ApiTokensTable, MembersTable, WorkspacesTable } from '../schema.js';
import type {
  ApiToken,
  IdentityStore,
  Member,
  NewToken,
  NewWorkspace,
  Role,
  TokenOwner,
  Workspace,
  WorkspacePatch,
} from '../identity-store.js';
import type { Transact } from './transact.js';
import type { TokenLimits } from '../../domain/token-limits.js';
import { PreparedQuery } from './prepared-query.js';
import { DEFAULT_PRIORITY } from '../identity-store.js';

/** Every authenticated request's lookup: the token, its workspace and the workspace's API user. */
const TOKEN_BY_HASH = new PreparedQuery((db, { args }: { args: { tokenHash: string } }) =>
  db
    .selectFrom('api_tokens as t')
    .innerJoin('workspaces as w', 'w.id', 't.workspace_id')
    .innerJoin('api_users as u', 'u.workspace_id', 't.workspace_id')
    .selectAll('t')
    .select([
      'w.name as w_name',
      'w.api_access as w_api_access',
      'w.max_concurrent_jobs as w_max_concurrent_jobs',
      'w.max_backlogged_jobs as w_max_backlogged_jobs',
      'w.created_at as w_created_at',
      'w.priority as w_priority',
      'u.id as api_user_id',
    ])
    .where('t.token_hash', '=', args.tokenHash)
    .compile(),
);

/** Conditional, so that of many concurrent requests with one token only the first writes. */
const TOUCH_TOKEN = new PreparedQuery((db, { args }: { args: { tokenId: string; now: number; notSince: number } }) =>
  db
    .updateTable('api_tokens')
    .set({ last_used_at: args.now })
    .where('id', '=', args.tokenId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', args.notSince)]))
    .compile(),
);

/** The running admission counts are the queue's (queue-queries.ts), not part of a Workspace. */
const toWorkspace = (r: Omit<Selectable<WorkspacesTable>, 'active_jobs' | 'backlogged_jobs'>): Workspace => ({
  id: r.id,
  name: r.name,
  apiAccess: Number(r.api_access) === 1,
  maxConcurrentJobs: Number(r.max_concurrent_jobs),
  maxBackloggedJobs: Number(r.max_backlogged_jobs),
  priority: Number(r.priority),
  createdAt: Number(r.created_at),
});

const toMember = (r: Selectable<MembersTable>): Member => ({
  workspaceId: r.workspace_id,
  email: r.email,
  role: r.role as Role,
  createdAt: Number(r.created_at),
});

const toToken = (r: Selectable<ApiTokensTable>): ApiToken => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  createdBy: r.created_by,
  createdAt: Number(r.created_at),
  lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
  revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  limits: r.limits === null ? null : (JSON.parse(r.limits) as TokenLimits),
});

export class SqlIdentityStore implements IdentityStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;

  constructor(db: Kysely<Database>, transact: Transact) {
    this.#db = db;
    this.#transact = transact;
  }

  createWorkspace(input: NewWorkspace): Promise<Workspace | undefined> {
    return this.#transact(async (db) => {
      const row = {
        id: input.id,
        name: input.name,
        api_access: 1,
        max_concurrent_jobs: input.maxConcurrentJobs,
        max_backlogged_jobs: input.maxBackloggedJobs,
        created_at: input.now,
        priority: DEFAULT_PRIORITY,
      };
      // The unique name decides a race between two creators on any backend, without a pre-check.
      const inserted = await db
        .insertInto('workspaces')
        .values(row)
        .onConflict((oc) => oc.column('name').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) return undefined;
      await db
        .insertInto('members')
        .values({ workspace_id: input.id, email: input.ownerEmail, role: 'owner', created_at: input.now })
        .execute();
      await db
        .insertInto('api_users')
        .values({ id: input.apiUserId, workspace_id: input.id, last_job_us: 0 })
        .execute();
      return toWorkspace(row);
    });
  }

  async findWorkspace(idOrName: string): Promise<Workspace | undefined> {
    const byId = await this.#db.selectFrom('workspaces').selectAll().where('id', '=', idOrName).executeTakeFirst();
    const row =
      byId ??
      (await this.#db.selectFrom('workspaces').selectAll().where('name', '=', idOrName).executeTakeFirst());
    return row && toWorkspace(row);
  }

  async listWorkspaces(): Promise<Workspace[]> {
    const rows = await this.#db.selectFrom('workspaces').selectAll().orderBy('created_at', 'asc').orderBy('name', 'asc').execute();
    return rows.map(toWorkspace);
  }

  async countWorkspaces(): Promise<number> {
    const r = await this.#db
      .selectFrom('workspaces')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async updateWorkspace(id: string, patch: WorkspacePatch): Promise<Workspace | undefined> {
    const set: Updateable<WorkspacesTable> = {};
    if (patch.apiAccess !== undefined) set.api_access = patch.apiAccess ? 1 : 0;
    if (patch.maxConcurrentJobs !== undefined) set.max_concurrent_jobs = patch.maxConcurrentJobs;
    if (patch.maxBackloggedJobs !== undefined) set.max_backlogged_jobs = patch.maxBackloggedJobs;
    if (patch.priority !== undefined) set.priority = patch.priority;
    if (Object.keys(set).length > 0) {
      await this.#db.updateTable('workspaces').set(set).where('id', '=', id).execute();
    }
    return this.findWorkspace(id);
  }

  async getMember(workspaceId: string, email: string): Promise<Member | undefined> {
    const r = await this.#db
      .selectFrom('members')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('email', '=', email)
      .executeTakeFirst();
    return r && toMember(r);
  }

  async listMembers(workspaceId: string): Promise<Member[]> {
    const rows = await this.#db
      .selectFrom('members')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at', 'asc')
      .orderBy('email', 'asc')
      .execute();
    return rows.map(toMember);
  }

  async putMember(m: Member): Promise<Member> {
    await this.#db
      .insertInto('members')
      .values({ workspace_id: m.workspaceId, email: m.email, role: m.role, created_at: m.createdAt })
      .onConflict((oc) => oc.columns(['workspace_id', 'email']).doUpdateSet({ role: m.role }))
      .execute();
    return (await this.getMember(m.workspaceId, m.email))!;
  }

  async insertToken(t: NewToken): Promise<ApiToken> {
    const row = {
      id: t.id,
      workspace_id: t.workspaceId,
      name: t.name,
      token_hash: t.tokenHash,
      created_by: t.createdBy,
      created_at: t.now,
      last_used_at: null,
      revoked_at: null,
      limits: t.limits ? JSON.stringify(t.limits) : null,
    };
    await this.#db.insertInto('api_tokens').values(row).execute();
    return toToken(row);
  }

  async listTokens(workspaceId: string): Promise<ApiToken[]> {
    const rows = await this.#db
      .selectFrom('api_tokens')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at', 'asc')
      .execute();
    return rows.map(toToken);
  }

  async getToken(workspaceId: string, tokenId: string): Promise<ApiToken | undefined> {
    const r = await this.#db
      .selectFrom('api_tokens')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', tokenId)
      .executeTakeFirst();
    return r && toToken(r);
  }

  async revokeToken(workspaceId: string, tokenId: string, now: number): Promise<ApiToken | undefined> {
    // Revoking twice keeps the first revocation time.
    await this.#db
      .updateTable('api_tokens')
      .set({ revoked_at: now })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', tokenId)
      .where('revoked_at', 'is', null)
      .execute();
    return this.getToken(workspaceId, tokenId);
  }

  async findTokenByHash(tokenHash: string): Promise<TokenOwner | undefined> {
    const r = (await TOKEN_BY_HASH.execute(this.#db, { tokenHash }, undefined)).rows[0];
    if (!r) return undefined;
    return {
      token: toToken(r),
      workspace: toWorkspace({
        id: r.workspace_id,
        name: r.w_name,
        api_access: r.w_api_access,
        max_concurrent_jobs: r.w_max_concurrent_jobs,
        max_backlogged_jobs: r.w_max_backlogged_jobs,
        created_at: r.w_created_at,
        priority: r.w_priority,
      }),
      apiUserId: r.api_user_id,
    };
  }

  async touchToken(tokenId: string, now: number, notSince: number): Promise<void> {
    await TOUCH_TOKEN.execute(this.#db, { tokenId, now, notSince }, undefined);
  }
}
