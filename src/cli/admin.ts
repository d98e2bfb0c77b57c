import { parseArgs } from 'node:util';
import { invalid } from '../domain/errors.js';
import { normalizeEmail } from '../services/identity.js';
import type { ApiToken, Workspace } from '../store/store.js';
import { iso, need, wholeNumber } from './admin-args.js';
import type { Command } from './admin-args.js';
import { BALANCE_COMMANDS, BALANCE_HELP } from './admin-balance.js';
import { NODE_APP_COMMANDS, NODE_APP_HELP } from './admin-node-apps.js';
import { WEBHOOK_COMMANDS, WEBHOOK_HELP } from './admin-webhooks.js';
import { WORKER_TOKEN_COMMANDS, WORKER_TOKEN_HELP } from './admin-worker-tokens.js';
import { openRuntime } from './context.js';

export const ADMIN_HELP = `Usage: mediagen admin <command> [options] [--data-dir DIR | --database-url URL] [--config FILE] [--json]

Works on the same store as a running server.

  workspace create --name N --owner EMAIL
  workspace set --workspace W [--api-access on|off] [--max-concurrent-jobs N] [--max-backlogged-jobs N]
  member add --workspace W --email E --role admin|member --as EMAIL       (owners only)
  token create --workspace W --name N --as EMAIL                          (owners and admins)
  token list --workspace W
  token revoke --workspace W --token-id T --as EMAIL                      (owners and admins)
${BALANCE_HELP}${WEBHOOK_HELP}${NODE_APP_HELP}${WORKER_TOKEN_HELP}
W is a workspace id or name. --json prints the result as JSON. A refused command exits 1.
`;

const tokenJson = (t: ApiToken) => ({
  token_id: t.id,
  name: t.name,
  created_by: t.createdBy,
  created_at: iso(t.createdAt),
  last_used_at: iso(t.lastUsedAt),
  revoked_at: iso(t.revokedAt),
});

const workspaceJson = (w: Workspace) => ({
  workspace_id: w.id,
  name: w.name,
  api_access: w.apiAccess,
  max_concurrent_jobs: w.maxConcurrentJobs,
  max_backlogged_jobs: w.maxBackloggedJobs,
});

const COMMANDS: Record<string, Command> = {
  ...BALANCE_COMMANDS,
  ...NODE_APP_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...WORKER_TOKEN_COMMANDS,
  'workspace create': async (s, f) => {
    const owner = normalizeEmail(need(f, 'owner'));
    const ws = await s.identity.createWorkspace(need(f, 'name'), owner);
    return {
      json: { workspace_id: ws.id, owner_email: owner },
      text: `created workspace ${ws.name} (${ws.id}) owned by ${owner}`,
    };
  },
  'workspace set': async (s, f) => {
    const access = f['api-access'];
    if (access !== undefined && access !== 'on' && access !== 'off') throw invalid('--api-access must be on or off');
    const ws = await s.identity.setWorkspace(need(f, 'workspace'), {
      apiAccess: access === undefined ? undefined : access === 'on',
      maxConcurrentJobs: wholeNumber(f, 'max-concurrent-jobs'),
      maxBackloggedJobs: wholeNumber(f, 'max-backlogged-jobs'),
    });
    return {
      json: workspaceJson(ws),
      text: `workspace ${ws.name}: api access ${ws.apiAccess ? 'on' : 'off'}, max concurrent jobs ${ws.maxConcurrentJobs}, max backlogged jobs ${ws.maxBackloggedJobs}`,
    };
  },
  'member add': async (s, f) => {
    const m = await s.identity.addMember(need(f, 'workspace'), need(f, 'email'), need(f, 'role'), need(f, 'as'));
    return {
      json: { workspace_id: m.workspaceId, email: m.email, role: m.role },
      text: `${m.email} is now ${m.role}`,
    };
  },
  'token create': async (s, f) => {
    const { token, secret } = await s.identity.createToken(need(f, 'workspace'), need(f, 'name'), need(f, 'as'));
    return {
      json: { token_id: token.id, token: secret },
      text: `created token ${token.name} (${token.id}). It is shown only this once:\n${secret}`,
    };
  },
  'token list': async (s, f) => {
    const tokens = await s.identity.listTokens(need(f, 'workspace'));
    return {
      json: tokens.map(tokenJson),
      text: tokens
        .map((t) => `${t.id}  ${t.name}  created ${iso(t.createdAt)} by ${t.createdBy}  last used ${iso(t.lastUsedAt) ?? 'never'}${t.revokedAt ? `  revoked ${iso(t.revokedAt)}` : ''}`)
        .join('\n'),
    };
  },
  'token revoke': async (s, f) => {
    const t = await s.identity.revokeToken(need(f, 'workspace'), need(f, 'token-id'), need(f, 'as'));
    return { json: tokenJson(t), text: `revoked token ${t.name} (${t.id})` };
  },
};

export async function admin(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      config: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      name: { type: 'string' },
      owner: { type: 'string' },
      workspace: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      as: { type: 'string' },
      'token-id': { type: 'string' },
      'api-access': { type: 'string' },
      'max-concurrent-jobs': { type: 'string' },
      'max-backlogged-jobs': { type: 'string' },
      usd: { type: 'string' },
      slug: { type: 'string' },
      description: { type: 'string' },
      'node-app': { type: 'string' },
      'input-schema': { type: 'string' },
      'output-schema': { type: 'string' },
      'example-output': { type: 'string', multiple: true },
      graph: { type: 'string' },
      models: { type: 'string', multiple: true },
    },
    strict: true,
    allowPositionals: true,
  });
  const key = positionals.join(' ');
  const command = COMMANDS[key];
  if (values.help) {
    process.stdout.write(ADMIN_HELP);
    return;
  }
  if (!command) {
    throw invalid(
      `${positionals.length ? `unknown admin command '${key}'` : 'missing admin command'}; ` +
        `commands are ${Object.keys(COMMANDS).join(', ')} (mediagen admin --help)`,
    );
  }
  const { store, services } = await openRuntime({
    'data-dir': values['data-dir'],
    'database-url': values['database-url'],
    config: values.config,
  });
  try {
    const out = await command(services, values);
    process.stdout.write(values.json ? `${JSON.stringify(out.json, null, 2)}\n` : `${out.text}\n`);
  } finally {
    await store.close();
  }
}
