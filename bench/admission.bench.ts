/**
 * Job creation time against the depth of the workspace's queue. Admission counts the workspace's
 * admitted and backlogged jobs in every create; counting stops at the limit, so with realistic
 * limits a deep queue costs nothing, while a workspace whose limit is as deep as its queue pays for
 * every row. Times are per create through inject() (no sockets), 500 creates per point.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../src/lib/ids.js';
import { createRuntime } from '../src/app/runtime.js';
import { loadConfig } from '../src/config/config.js';

const DEPTHS = [0, 2_000, 10_000];
const PER_POINT = 500;

async function measure(limits: { maxConcurrentJobs: number; maxBackloggedJobs: number }): Promise<{ create: number[]; hold: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'mediagen-bench-'));
  const runtime = await createRuntime({ ...loadConfig({ env: {} }), dataDir: dir, ...limits });
  const { store, services } = runtime;
  const boot = (await services.identity.bootstrap())!;
  // Enough API balance that the bench measures admission, never a 402.
  await store.billing.topUp({ workspaceId: boot.workspace.id, amountMicros: 1e12, createdBy: 'bench', now: 0 });
  const app = await runtime.buildHttp({ publicUrl: () => 'http://bench' });
  const headers = { authorization: `Bearer ${boot.secret}`, 'content-type': 'application/json' };
  const payload = JSON.stringify({ prompt: 'p', aspect_ratio: '1:1', resolution: '1K' });
  const create = () => app.inject({ method: 'POST', url: '/generate/image/vendor-a/model-a-2/medium', headers, payload });
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
      await store.transaction((tx) =>
        tx.billing.hold({ workspaceId: boot.workspace.id, jobId: newId(), jobType: 'bench', amountMicros: 30_000, now: Date.now() * 1000 }),
      );
    }
    holds.push(Number(process.hrtime.bigint() - t1) / PER_POINT / 1000);
  }
  await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
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
