import type { Micros } from '../lib/time.js';
import type { TokenLimits } from '../domain/token-limits.js';

export type Role = 'owner' | 'admin' | 'member';

export interface Workspace {
  readonly id: string;
  readonly name: string;
  readonly apiAccess: boolean;
  readonly maxConcurrentJobs: number;
  readonly maxBackloggedJobs: number;
  /** Claim priority, 0 to 9: a claim takes the highest first (store/sql/claim-statement.ts). */
  readonly priority: number;
  readonly createdAt: Micros;
}

/** A new workspace's priority, and every workspace's before migration 0021. */
export const DEFAULT_PRIORITY = 5;
export const MAX_PRIORITY = 9;

export interface Member {
  readonly workspaceId: string;
  readonly email: string;
  readonly role: Role;
  readonly createdAt: Micros;
}

export interface ApiToken {
  readonly id: string;
  readonly workspaceId: string;
  readonly name: string;
  readonly createdBy: string;
  readonly createdAt: Micros;
  readonly lastUsedAt: Micros | null;
  readonly revokedAt: Micros | null;
  /** Its own limits (domain/token-limits.ts); null: the workspace's alone. */
  readonly limits: TokenLimits | null;
}

export interface TokenOwner {
  readonly token: ApiToken;
  readonly workspace: Workspace;
  readonly apiUserId: string;
}

export interface NewWorkspace {
  readonly id: string;
  readonly name: string;
  readonly ownerEmail: string;
  readonly apiUserId: string;
  readonly maxConcurrentJobs: number;
  readonly maxBackloggedJobs: number;
  readonly now: Micros;
}

export interface WorkspacePatch {
  readonly apiAccess?: boolean;
  readonly maxConcurrentJobs?: number;
  readonly maxBackloggedJobs?: number;
  readonly priority?: number;
}

export interface NewToken {
  readonly id: string;
  readonly workspaceId: string;
  readonly name: string;
  readonly tokenHash: string;
  readonly createdBy: string;
  readonly now: Micros;
  readonly limits?: TokenLimits | null;
}

/** Workspaces, their members and their API tokens: who may call the API, and as whom. */
export interface IdentityStore {
  /** Creates the workspace, its owner and its API user together; undefined if the name is taken. */
  createWorkspace(input: NewWorkspace): Promise<Workspace | undefined>;
  findWorkspace(idOrName: string): Promise<Workspace | undefined>;
  /** Every workspace, oldest first (the operator's view: `mediagen admin workspace list`). */
  listWorkspaces(): Promise<Workspace[]>;
  countWorkspaces(): Promise<number>;
  updateWorkspace(id: string, patch: WorkspacePatch): Promise<Workspace | undefined>;
  getMember(workspaceId: string, email: string): Promise<Member | undefined>;
  /** The workspace's members, oldest first (the owner, who came with the workspace, leads). */
  listMembers(workspaceId: string): Promise<Member[]>;
  /** Adds or changes a member's role. */
  putMember(member: Member): Promise<Member>;
  insertToken(token: NewToken): Promise<ApiToken>;
  listTokens(workspaceId: string): Promise<ApiToken[]>;
  getToken(workspaceId: string, tokenId: string): Promise<ApiToken | undefined>;
  revokeToken(workspaceId: string, tokenId: string, now: Micros): Promise<ApiToken | undefined>;
  findTokenByHash(tokenHash: string): Promise<TokenOwner | undefined>;
  /** Records use at `now` unless the last recorded use is later than `notSince`. */
  touchToken(tokenId: string, now: Micros, notSince: Micros): Promise<void>;
}
