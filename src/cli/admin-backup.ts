import { need } from './admin-args.js';
import type { AdminCommand } from './admin-args.js';

/** A copy of the embedded store while servers run on it (docs/operations.md). */
export const BACKUP_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'store backup',
    summary: 'copy the SQLite store to a new file, consistently, while servers keep running',
    who: '(SQLite only; PostgreSQL: pg_dump)',
    options: [{ flag: 'to', arg: 'FILE', help: 'the new file to write (refused if it exists)', required: true }],
    run: async (s, f) => {
      const r = await s.backup.backup(need(f, 'to'));
      return { json: r, text: `backed up the store to ${r.file} (${r.bytes} bytes, ${r.took_ms} ms)` };
    },
  },
];
