/**
 * Job creation time against the depth of the workspace's queue (not part of `npm run bench`):
 *
 *   npx tsx bench/admission.bench.ts
 *
 * Admission counts the workspace's admitted and backlogged jobs in every create; counting stops at
 * the limit, so with realistic limits a deep queue costs nothing, while a workspace whose limit is
 * as deep as its queue pays for every row. Times are per create through inject() (no sockets), 500
 * creates per point, on SQLite, with no worker running (every job stays queued).
 */
import { newId } from '../src/lib/ids.js';
import { createSqliteDatabase } from './lib/database.js';
import { CREATE_BODY, CREATE_PATH } from './lib/settings.js';
import { startServer } from './lib/wiring.js';

const DEPTHS = [0, 2_000, 10_000];
const PER_POINT = 500;

async function measure(limits: { maxConcurrentJobs: number; maxBackloggedJobs: number }): Promise<{ create: number[]; hold: number[] }> {
  const db = createSqliteDatabase();
  const server = await startServer({ dataDir: db.dataDir, limits });
  const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
  const create = () => server.app.inject({ method: 'POST', url: CREATE_PATH, headers, payload: CREATE_BODY });
  const out: number[] = [];
  const holds: number[] = [];
  let made = 0;
  for (const depth of DEPTHS) {
    for (; made < depth; made++) await create();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < PER_POINT; i++) await create();
    made += PER_POINT;
    out.push(Number(process.hrtime.bigint() - t0) / PER_POINT / 1000);
    // The billing part of a create alone: the guarded hold and its ledger entry, in a transaction.
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < PER_POINT; i++) {
      await server.store.transaction((tx) =>
        tx.billing.hold({ workspaceId: server.workspaceId, jobId: newId(), jobType: 'bench', amountMicros: 30_000, now: Date.now() * 1000 }),
      );
    }
    holds.push(Number(process.hrtime.bigint() - t1) / PER_POINT / 1000);
  }
  await server.close();
  await db.drop();
  return { create: out, hold: holds };
}

// Default concurrency and a backlog deep enough to hold every job: the counts stop at 4 and 1M.
const bounded = await measure({ maxConcurrentJobs: 4, maxBackloggedJobs: 1_000_000 });
console.log('\njob creation time (µs) by jobs already waiting in the workspace:');
console.log(`  depth              ${DEPTHS.map((d) => String(d).padStart(8)).join('')}`);
console.log(`  per create         ${bounded.create.map((us) => us.toFixed(0).padStart(8)).join('')}`);
console.log(`  ratio to depth 0   ${bounded.create.map((us) => (us / bounded.create[0]!).toFixed(2).padStart(8)).join('')}`);
console.log(`  hold alone         ${bounded.hold.map((us) => us.toFixed(0).padStart(8)).join('')}`);
console.log(`  hold / create      ${bounded.hold.map((us, i) => (us / bounded.create[i]!).toFixed(2).padStart(8)).join('')}`);
process.exit(0);
