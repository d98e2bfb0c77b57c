import type { BalanceReport } from '../services/billing/billing.js';
import { AS, WORKSPACE, need } from './admin-args.js';
import type { AdminCommand } from './admin-args.js';

const text = (r: BalanceReport) => `workspace ${r.workspace_id}: balance $${r.balance_usd}, of which $${r.held_usd} is held for jobs in progress`;

/** The API balance (spec 5.6 and 8): no public endpoint reports it, so the admin CLI does. */
export const BALANCE_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'balance add',
    summary: "add to a workspace's API balance",
    who: '(owners only; 5.00 to 10000.00)',
    options: [WORKSPACE, { flag: 'usd', arg: 'AMOUNT', help: 'US dollars, 5.00 to 10000.00', required: true }, AS],
    run: async (s, f) => {
      const r = await s.billing.topUp(need(f, 'workspace'), need(f, 'usd'), need(f, 'as'));
      return { json: r, text: text(r) };
    },
  },
  {
    name: 'balance show',
    summary: "show a workspace's API balance and how much of it is held",
    options: [WORKSPACE],
    run: async (s, f) => {
      const r = await s.billing.show(need(f, 'workspace'));
      return { json: r, text: text(r) };
    },
  },
];
