import type { SecretReport } from '../services/webhooks.js';
import { need } from './admin-args.js';
import type { Command } from './admin-args.js';

export const WEBHOOK_HELP = `  webhook-secret show --workspace W --as EMAIL                            (owners and admins)
  webhook-secret rotate --workspace W --as EMAIL                          (owners and admins; the old one signs 24 h more)
`;

const text = (r: SecretReport) =>
  `${r.secret}${r.previous_secret_valid_until ? `\n(the previous secret also signs until ${r.previous_secret_valid_until})` : ''}`;

/** The workspace's webhook signing secret (docs/webhooks.md). */
export const WEBHOOK_COMMANDS: Record<string, Command> = {
  'webhook-secret show': async (s, f) => {
    const r = await s.webhooks.showSecret(need(f, 'workspace'), need(f, 'as'));
    return { json: r, text: text(r) };
  },
  'webhook-secret rotate': async (s, f) => {
    const r = await s.webhooks.rotateSecret(need(f, 'workspace'), need(f, 'as'));
    return { json: r, text: text(r) };
  },
};
