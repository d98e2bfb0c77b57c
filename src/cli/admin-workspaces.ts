import { invalid } from '../domain/error-catalogue.js';
import { normalizeEmail } from '../services/identity/identity.js';
import type { ApiToken, Member, Workspace } from '../store/store.js';
import { AS, WORKSPACE, iso, list, need, wholeNumber } from './admin-args.js';
import { limitsView, tokenLimitsOf } from '../services/identity/tokens.js';
import type { AdminCommand } from './admin-args.js';

const tokenJson = (t: ApiToken) => ({
  token_id: t.id,
  name: t.name,
  created_by: t.createdBy,
  created_at: iso(t.createdAt),
  last_used_at: iso(t.lastUsedAt),
  revoked_at: iso(t.revokedAt),
  limits: limitsView(t.limits),
});


const workspaceJson = (w: Workspace) => ({
  workspace_id: w.id,
  name: w.name,
  api_access: w.apiAccess,
  max_concurrent_jobs: w.maxConcurrentJobs,
  max_backlogged_jobs: w.maxBackloggedJobs,
  priority: w.priority,
});

const memberJson = (m: Member) => ({ email: m.email, role: m.role, added_at: iso(m.createdAt) });

const limits = (w: Workspace) => `max concurrent jobs ${w.maxConcurrentJobs}, max backlogged jobs ${w.maxBackloggedJobs}, priority ${w.priority}`;

/** Workspaces, members and API tokens (spec section 5). */
export const WORKSPACE_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'workspace create',
    summary: 'create a workspace and its owner; on a data dir or database with no store, creates the store',
    options: [
      { flag: 'name', arg: 'N', help: 'the workspace name (unique, 1 to 200 characters)', required: true },
      { flag: 'owner', arg: 'EMAIL', help: "the owner's email", required: true },
    ],
    createsStore: true,
    run: async (s, f) => {
      const owner = normalizeEmail(need(f, 'owner'));
      const ws = await s.identity.createWorkspace(need(f, 'name'), owner);
      return {
        json: { workspace_id: ws.id, owner_email: owner },
        text: `created workspace ${ws.name} (${ws.id}) owned by ${owner}`,
      };
    },
  },
  {
    name: 'workspace list',
    summary: 'list every workspace, oldest first',
    options: [],
    run: async (s) => {
      const all = await s.identity.listWorkspaces();
      return {
        json: all.map((w) => ({ ...workspaceJson(w), created_at: iso(w.createdAt) })),
        text: all.map((w) => `${w.id}  ${w.name}  api access ${w.apiAccess ? 'on' : 'off'}  ${limits(w)}  created ${iso(w.createdAt)}`).join('\n'),
      };
    },
  },
  {
    name: 'workspace set',
    summary: "change a workspace's API access, job limits and priority; no option: show them",
    options: [
      WORKSPACE,
      { flag: 'api-access', arg: 'on|off', help: 'on: its tokens work; off: every request with them gets 403' },
      { flag: 'max-concurrent-jobs', arg: 'N', help: 'at most N of its jobs queued or running at once' },
      { flag: 'max-backlogged-jobs', arg: 'N', help: 'at most N more waiting as backlogged' },
      { flag: 'priority', arg: 'N', help: 'claim priority 0 to 9 (default 5): workers take higher first (docs/routing.md)' },
    ],
    run: async (s, f) => {
      const access = f['api-access'];
      if (access !== undefined && access !== 'on' && access !== 'off') throw invalid('--api-access must be on or off');
      const ws = await s.identity.setWorkspace(need(f, 'workspace'), {
        apiAccess: access === undefined ? undefined : access === 'on',
        maxConcurrentJobs: wholeNumber(f, 'max-concurrent-jobs'),
        maxBackloggedJobs: wholeNumber(f, 'max-backlogged-jobs'),
        priority: wholeNumber(f, 'priority'),
      });
      return { json: workspaceJson(ws), text: `workspace ${ws.name}: api access ${ws.apiAccess ? 'on' : 'off'}, ${limits(ws)}` };
    },
  },
  {
    name: 'member add',
    summary: "add a member to a workspace, or change a member's role",
    who: '(owners only)',
    options: [
      WORKSPACE,
      { flag: 'email', arg: 'E', help: "the member's email", required: true },
      { flag: 'role', arg: 'admin|member', help: 'admins also manage API tokens and the webhook secret', required: true },
      AS,
    ],
    run: async (s, f) => {
      const m = await s.identity.addMember(need(f, 'workspace'), need(f, 'email'), need(f, 'role'), need(f, 'as'));
      return { json: { workspace_id: m.workspaceId, email: m.email, role: m.role }, text: `${m.email} is now ${m.role}` };
    },
  },
  {
    name: 'member list',
    summary: "list a workspace's members and their roles, the owner first",
    options: [WORKSPACE],
    run: async (s, f) => {
      const members = await s.identity.listMembers(need(f, 'workspace'));
      return { json: members.map(memberJson), text: members.map((m) => `${m.email}  ${m.role}  added ${iso(m.createdAt)}`).join('\n') };
    },
  },
  {
    name: 'token create',
    summary: 'create an API token; it is shown only this once',
    who: '(owners and admins)',
    options: [
      WORKSPACE,
      { flag: 'name', arg: 'N', help: "the token's name (1 to 200 characters)", required: true },
      { flag: 'spend-limit-usd', arg: 'USD', help: 'its own spend limit in USD (charged or held), such as 25.00 (docs/routing.md)' },
      { flag: 'spend-period', arg: 'day|month|total', help: 'what the spend limit covers: the UTC day, the UTC month, or all time (default)' },
      { flag: 'model', arg: 'PATTERN', help: 'a model pattern it may use (image/*); repeat for more; none: every model', repeatable: true },
      { flag: 'max-concurrent-jobs', arg: 'N', help: 'at most this many of its jobs in flight' },
      AS,
    ],
    run: async (s, f) => {
      const models = list(f, 'model');
      const maxJobs = wholeNumber(f, 'max-concurrent-jobs');
      const limits = tokenLimitsOf({
        ...(typeof f['spend-limit-usd'] === 'string' ? { spend_limit_usd: f['spend-limit-usd'] } : {}),
        ...(typeof f['spend-period'] === 'string' ? { spend_period: f['spend-period'] } : {}),
        ...(models.length > 0 ? { models } : {}),
        ...(maxJobs !== undefined ? { max_concurrent_jobs: maxJobs } : {}),
      });
      const { token, secret } = await s.identity.createToken(need(f, 'workspace'), need(f, 'name'), need(f, 'as'), limits);
      return {
        json: { token_id: token.id, token: secret, ...(limits ? { limits: limitsView(limits) } : {}) },
        text: `created token ${token.name} (${token.id}). It is shown only this once:\n${secret}`,
      };
    },
  },
  {
    name: 'token list',
    summary: "list a workspace's API tokens (never the tokens themselves)",
    options: [WORKSPACE],
    run: async (s, f) => {
      const tokens = await s.identity.listTokens(need(f, 'workspace'));
      return {
        json: tokens.map(tokenJson),
        text: tokens
          .map((t) => `${t.id}  ${t.name}  created ${iso(t.createdAt)} by ${t.createdBy}  last used ${iso(t.lastUsedAt) ?? 'never'}${t.revokedAt ? `  revoked ${iso(t.revokedAt)}` : ''}`)
          .join('\n'),
      };
    },
  },
  {
    name: 'token revoke',
    summary: 'revoke an API token: requests with it get 401',
    who: '(owners and admins)',
    options: [WORKSPACE, { flag: 'token-id', arg: 'T', help: 'the token id (from token list)', required: true }, AS],
    run: async (s, f) => {
      const t = await s.identity.revokeToken(need(f, 'workspace'), need(f, 'token-id'), need(f, 'as'));
      return { json: tokenJson(t), text: `revoked token ${t.name} (${t.id})` };
    },
  },
];
