import type { BalanceReport } from '../services/billing.js';
import { need } from './admin-args.js';
import type { Command } from './admin-args.js';

export const BALANCE_HELP = `  balance add --workspace W --usd AMOUNT --as EMAIL                       (owners only; 5.00 to 10000.00)
  balance show --workspace W
`;

const text = (r: BalanceReport) => `workspace ${r.workspace_id}: balance $${r.balance_usd}, of which $${r.held_usd} is held for jobs in progress`;

/** The API balance (spec 5.6 and 8): no public endpoint reports it, so the admin CLI does. */
export const BALANCE_COMMANDS: Record<string, Command> = {
  'balance add': async (s, f) => {
    const r = await s.billing.topUp(need(f, 'workspace'), need(f, 'usd'), need(f, 'as'));
    return { json: r, text: text(r) };
  },
  'balance show': async (s, f) => {
    const r = await s.billing.show(need(f, 'workspace'));
    return { json: r, text: text(r) };
  },
};
