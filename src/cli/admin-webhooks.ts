import type { SecretReport } from '../services/webhooks/webhooks.js';
import { AS, WORKSPACE, need } from './admin-args.js';
import type { AdminCommand } from './admin-args.js';

const text = (r: SecretReport) =>
  `${r.secret}${r.previous_secret_valid_until ? `\n(the previous secret also signs until ${r.previous_secret_valid_until})` : ''}`;

/** The workspace's webhook signing secret (docs/webhooks.md). */
export const WEBHOOK_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'webhook-secret show',
    summary: "show the workspace's webhook signing secret",
    who: '(owners and admins)',
    options: [WORKSPACE, AS],
    run: async (s, f) => {
      const r = await s.webhooks.showSecret(need(f, 'workspace'), need(f, 'as'));
      return { json: r, text: text(r) };
    },
  },
  {
    name: 'webhook-secret rotate',
    summary: 'replace the webhook signing secret',
    who: '(owners and admins; the old one signs 24 h more)',
    options: [WORKSPACE, AS],
    run: async (s, f) => {
      const r = await s.webhooks.rotateSecret(need(f, 'workspace'), need(f, 'as'));
      return { json: r, text: text(r) };
    },
  },
];
