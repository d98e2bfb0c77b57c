import type { WorkerToken } from '../store/remote-token-store.js';
import { iso, list, need } from './admin-args.js';
import type { AdminCommand } from './admin-args.js';

const tokenJson = (t: WorkerToken) => ({
  token_id: t.id,
  name: t.name,
  models: t.models,
  created_at: iso(t.createdAt),
  last_used_at: iso(t.lastUsedAt),
  revoked_at: iso(t.revokedAt),
});

const modelsText = (t: WorkerToken) => (t.models.length === 0 ? 'every model' : t.models.join(' '));

/** Worker tokens (docs/workers.md): not workspace-scoped, so no --workspace and no --as. */
export const WORKER_TOKEN_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'worker-token create',
    summary: 'create a token for remote GPU workers; it is shown only this once',
    who: '(remote GPU workers; no --models: every model)',
    options: [
      { flag: 'name', arg: 'N', help: "the token's name", required: true },
      { flag: 'models', arg: 'PATTERN', help: 'a model path pattern its workers may run (* matches any characters); repeat for more', repeatable: true },
    ],
    run: async (s, f) => {
      const { token, record } = await s.workerTokens.create(need(f, 'name'), list(f, 'models'));
      return {
        json: { ...tokenJson(record), token },
        text: `created worker token ${record.name} (${record.id}) for ${modelsText(record)}. It is shown only this once:\n${token}`,
      };
    },
  },
  {
    name: 'worker-token list',
    summary: 'list the worker tokens (never the tokens themselves)',
    options: [],
    run: async (s) => {
      const tokens = await s.workerTokens.list();
      return {
        json: tokens.map(tokenJson),
        text: tokens
          .map(
            (t) =>
              `${t.id}  ${t.name}  models ${modelsText(t)}  created ${iso(t.createdAt)}  last used ${iso(t.lastUsedAt) ?? 'never'}` +
              (t.revokedAt ? `  revoked ${iso(t.revokedAt)}` : ''),
          )
          .join('\n'),
      };
    },
  },
  {
    name: 'worker-token revoke',
    summary: 'revoke a worker token: its workers get 401',
    options: [{ flag: 'token-id', arg: 'T', help: 'the token id (from worker-token list)', required: true }],
    run: async (s, f) => {
      const t = await s.workerTokens.revoke(need(f, 'token-id'));
      return { json: tokenJson(t), text: `revoked worker token ${t.name} (${t.id})` };
    },
  },
];
