import type { WorkerToken } from '../store/worker-token-store.js';
import { iso, need } from './admin-args.js';
import type { Command, Flags } from './admin-args.js';
import { invalid } from '../domain/errors.js';

export const WORKER_TOKEN_HELP = `  worker-token create --name N [--models PATTERN]...                      (remote GPU workers; no --models: every model)
  worker-token list
  worker-token revoke --token-id T
`;

const tokenJson = (t: WorkerToken) => ({
  token_id: t.id,
  name: t.name,
  models: t.models,
  created_at: iso(t.createdAt),
  last_used_at: iso(t.lastUsedAt),
  revoked_at: iso(t.revokedAt),
});

const modelsText = (t: WorkerToken) => (t.models.length === 0 ? 'every model' : t.models.join(' '));

function patterns(f: Flags): string[] {
  const v = f.models;
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw invalid('--models takes a value');
  return v;
}

/** Worker tokens (docs/workers.md): not workspace-scoped, so no --workspace and no --as. */
export const WORKER_TOKEN_COMMANDS: Record<string, Command> = {
  'worker-token create': async (s, f) => {
    const { token, record } = await s.workerTokens.create(need(f, 'name'), patterns(f));
    return {
      json: { ...tokenJson(record), token },
      text: `created worker token ${record.name} (${record.id}) for ${modelsText(record)}. It is shown only this once:\n${token}`,
    };
  },
  'worker-token list': async (s) => {
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
  'worker-token revoke': async (s, f) => {
    const t = await s.workerTokens.revoke(need(f, 'token-id'));
    return { json: tokenJson(t), text: `revoked worker token ${t.name} (${t.id})` };
  },
};
