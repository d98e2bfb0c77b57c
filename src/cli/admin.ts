import type { AdminCommand } from './admin-args.js';
import { BACKUP_COMMANDS } from './admin-backup.js';
import { BALANCE_COMMANDS } from './admin-balance.js';
import { NODE_APP_COMMANDS } from './admin-node-apps.js';
import { helpLines, parseAdmin } from './admin-parser.js';
import { WEBHOOK_COMMANDS } from './admin-webhooks.js';
import { WORKER_TOKEN_COMMANDS } from './admin-worker-tokens.js';
import { WORKSPACE_COMMANDS } from './admin-workspaces.js';
import { openRuntime } from './context.js';
import { packageVersion } from './version.js';

/** Every `mediagen admin` command, in the order the help lists them. */
export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  ...WORKSPACE_COMMANDS,
  ...BALANCE_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...NODE_APP_COMMANDS,
  ...WORKER_TOKEN_COMMANDS,
  ...BACKUP_COMMANDS,
];

export const ADMIN_HELP = `Usage: mediagen admin <command> [options]

Works on the same store as a running server. Each command takes only its own options, listed
below and by 'mediagen admin <command> --help', and these:
  --data-dir DIR | --database-url URL   the store (default ./data; env MEDIAGEN_DATA_DIR, MEDIAGEN_DATABASE_URL)
  --config FILE                         a JSON config file (env MEDIAGEN_CONFIG)
  --json                                print the result as JSON

Commands:
${ADMIN_COMMANDS.map(helpLines).join('\n')}

W is a workspace id or name. A refused command exits 1 with a one-line message. A --data-dir or
--database-url that holds no store is refused, except by 'workspace create', which makes one.
'mediagen admin --version' prints the version.
`;

export async function admin(argv: string[]): Promise<void> {
  const chosen = parseAdmin(argv, ADMIN_COMMANDS, { help: ADMIN_HELP, version: packageVersion() });
  // --help or --version: printed, nothing opened.
  if (!chosen) return;
  const { command, flags } = chosen;
  const { store, services } = await openRuntime(
    { 'data-dir': flags['data-dir'], 'database-url': flags['database-url'], config: flags.config },
    {},
    { existingStore: !command.createsStore },
  );
  try {
    const out = await command.run(services, flags);
    process.stdout.write(flags.json ? `${JSON.stringify(out.json, null, 2)}\n` : `${out.text}\n`);
  } finally {
    await store.close();
  }
}
