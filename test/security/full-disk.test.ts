import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { toDomainError } from '../../src/http/plugins/error-handler.js';
import { headersOf, statusOf } from '../../src/http/error-status.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import type { Backend } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { CapturingLog } from '../helpers/faults.js';
import { ScriptedEngine, waitFor } from '../helpers/scripted-engine.js';

/** Storage that cannot take writes, under requests and under a worker: 503, never 500; nothing lost. */

const MODEL = 'image/vendor-b/model-b-1';
const PROMPT = 'a red fox in the snow';
const settle = () => new Promise((r) => setTimeout(r, 40));

let t: TestApp | undefined;
let worker: Worker | undefined;
let engine: ScriptedEngine | undefined;
afterEach(async () => {
  engine?.hold?.resolve();
  await worker?.stop(0);
  worker = undefined;
  await t?.close();
  t = undefined;
});

describe('store and disk errors under a request map to 503, never 500', () => {
  it('a real SQLITE_FULL and SQLITE_READONLY from better-sqlite3 answer 503 unavailable with Retry-After', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-full-'));
    try {
      const file = join(dir, 'x.db');
      const db = new SQLite(file);
      db.exec('CREATE TABLE t (b BLOB)');
      // A page budget the next insert cannot fit in: SQLite's own "database or disk is full".
      db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
      let full: unknown;
      try {
        db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(64 * 1024));
      } catch (err) {
        full = err;
      }
      db.close();
      expect((full as { code: string }).code).toBe('SQLITE_FULL');
      const e1 = toDomainError(full as Error, undefined, 'POST');
      expect([statusOf(e1), e1.message, headersOf(e1)['retry-after']]).toEqual([503, 'the server cannot store new jobs right now: its disk is full; retry later', '30']);

      const ro = new SQLite(file, { readonly: true });
      let readOnly: unknown;
      try {
        ro.prepare('INSERT INTO t VALUES (1)').run();
      } catch (err) {
        readOnly = err;
      }
      ro.close();
      expect((readOnly as { code: string }).code).toMatch(/^SQLITE_READONLY/);
      const e2 = toDomainError(readOnly as Error, undefined, 'POST');
      expect([statusOf(e2), e2.message]).toEqual([503, 'the server cannot store new jobs right now: its storage is read-only; retry later']);
      expect(statusOf(toDomainError(new Error('a bug'), undefined, 'POST'))).toBe(500);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Mounting a tmpfs needs root (or CAP_SYS_ADMIN); CI runs as root on the same kind of machine. */
function mountSupport(): { ok: true } | { ok: false; why: string } {
  const probe = mkdtempSync(join(tmpdir(), 'mediagen-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return { ok: true };
  } catch (err) {
    return { ok: false, why: `mount -t tmpfs is not permitted here (${String((err as Error).message).split('\n')[0]})` };
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const MOUNT = mountSupport();
if (!MOUNT.ok) console.warn(`skipping the real full-filesystem tests: ${MOUNT.why}`);

describe.skipIf(!MOUNT.ok)('a real full filesystem under the data dir (a 4 MiB tmpfs)', () => {
  let mnt: string | undefined;
  let roView: string | undefined;
  afterEach(async () => {
    await worker?.stop(0);
    worker = undefined;
    await t?.close();
    t = undefined;
    if (roView) {
      execFileSync('umount', [roView], { stdio: 'pipe' });
      rmSync(roView, { recursive: true, force: true });
      roView = undefined;
    }
    if (mnt) {
      execFileSync('umount', [mnt], { stdio: 'pipe' });
      rmSync(mnt, { recursive: true, force: true });
      mnt = undefined;
    }
  });

  /** A server whose data dir (SQLite file and write probe) is a fresh tmpfs. */
  async function serverOnTmpfs(minFreeBytes: number): Promise<{ app: TestApp; dir: string }> {
    const dir = (mnt = mkdtempSync(join(tmpdir(), 'mediagen-tmpfs-')));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'pipe' });
    const app = (t = await createTestApp({ backend: sqliteAt(dir), storage: { dir, minFreeBytes } }));
    return { app, dir };
  }

  /** SQLite in `dir`, left in place by drop (the mount goes with the test). */
  const sqliteAt = (dir: string): Backend => ({
    name: 'sqlite',
    asyncLocks: false,
    create: async () => ({ open: () => openSqliteStore(join(dir, 'mediagen.db')), drop: async () => undefined }),
  });

  /** Writes until the filesystem says ENOSPC, for real. */
  function fill(dir: string): string {
    const file = join(dir, 'filler');
    const chunk = Buffer.alloc(64 * 1024, 1);
    for (let i = 0; i < 1000; i++) {
      try {
        appendFileSync(file, chunk);
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
        // Page-sized writes too, so not even a page is left.
        for (let j = 0; j < 64; j++) {
          try {
            appendFileSync(file, Buffer.alloc(4096, 1));
          } catch {
            break;
          }
        }
        return file;
      }
    }
    throw new Error('the tmpfs never filled');
  }

  const post = (app: TestApp) => generate(app, MODEL, { prompt: PROMPT });

  it('answers creation 503 with Retry-After while the disk is full, keeps reads and outputs going, reports it in /readyz, and recovers once space is freed', async () => {
    const { app, dir } = await serverOnTmpfs(512 * 1024);
    const first = await post(app);
    expect(first.statusCode).toBe(200);
    const id = (first.json() as { job_id: string }).job_id;
    expect((await app.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    const filler = fill(dir);
    app.clock.advance(1_000);
    const refused = await post(app);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.json()).toEqual({ error: 'the server cannot store new jobs right now: its disk is full; retry later' });
    expect((await get(app, '/jobs')).json()).toMatchObject({ items: [{ job_id: id }] });
    expect((await get(app, `/jobs/${id}`)).statusCode).toBe(200);
    const ready = await app.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    // The store's own probe write may fail too (it is on the same disk); the disk check names the cause.
    expect((ready.json() as { error: string }).error).toMatch(/^not ready: /);
    expect((ready.json() as { checks: Json }).checks.disk).toBe('free space below min_free_disk_bytes');
    expect(ready.body).not.toContain(dir);
    await expectLedgerConsistent(app.store, app.workspaceId);

    rmSync(filler);
    app.clock.advance(1_000);
    expect((await post(app)).statusCode).toBe(200);
    expect((await app.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('a worker claims nothing while the data dir is full (the jobs wait, unbilled and unfailed), and runs them once space is freed', async () => {
    const { app, dir } = await serverOnTmpfs(512 * 1024);
    const id = ((await post(app)).json() as { job_id: string }).job_id;
    const filler = fill(dir);
    app.clock.advance(1_000); // past the second for which the creation's disk check is kept
    const log = new CapturingLog();
    engine = new ScriptedEngine();
    worker = new Worker({ ...app.services, engine, loadInput: () => Promise.reject(new Error('no inputs here')), loadStyle: () => Promise.reject(new Error('no styles here')), log }, { concurrency: 1, pollMs: 1000 });
    worker.start();
    await waitFor(async () => log.lines.some((l) => l.obj.alert === 'infrastructure_fault'), 'the paused-claims alert');
    await settle();
    const waiting = (await app.services.runs.find(id))!;
    expect([waiting.status, waiting.attempts, waiting.faultCount]).toEqual(['queued', 0, 0]);
    expect(engine.started).toEqual([]);

    rmSync(filler);
    app.clock.advance(1_000);
    await waitFor(async () => (await app.services.runs.find(id))!.status === 'completed', 'the job to complete');
    expect(log.lines.some((l) => l.obj.resolved === true)).toBe(true);
    await expectLedgerConsistent(app.store, app.workspaceId);
  });

  it('maps the store running into the full disk itself (SQLITE_FULL, no free-space floor) to 503, and holds nothing for the refused job', async () => {
    const { app, dir } = await serverOnTmpfs(0);
    expect((await post(app)).statusCode).toBe(200);
    const held = (await expectLedgerConsistent(app.store, app.workspaceId)).held;
    fill(dir);
    // Within the disk check's second the guard still says yes: the store's own error must answer.
    const refused = await post(app);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('30');
    expect((refused.json() as Json).error).toMatch(/^the server cannot store new jobs right now: its (disk is full|storage is failing); retry later$/);
    expect((await expectLedgerConsistent(app.store, app.workspaceId)).held).toBe(held);
    expect((await get(app, '/jobs')).statusCode).toBe(200);
  });

  it('answers creation 503 "read-only" when the data dir is a read-only mount (a real EROFS), while reads go on', async () => {
    const dir = (mnt = mkdtempSync(join(tmpdir(), 'mediagen-tmpfs-')));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'pipe' });
    // The store stays writable; the data dir the server checks is a read-only bind mount of it
    // (remounting the store's own filesystem read-only is refused while SQLite holds it open).
    const view = (roView = mkdtempSync(join(tmpdir(), 'mediagen-ro-')));
    execFileSync('mount', ['--bind', dir, view], { stdio: 'pipe' });
    execFileSync('mount', ['-o', 'remount,bind,ro', view], { stdio: 'pipe' });
    const ro = (t = await createTestApp({ backend: sqliteAt(dir), storage: { dir: view, minFreeBytes: 0 } }));
    const refused = await post(ro);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.json()).toEqual({ error: 'the server cannot store new jobs right now: its storage is read-only; retry later' });
    expect((await get(ro, '/jobs')).statusCode).toBe(200);
    const ready = await ro.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ error: 'not ready: disk read-only', checks: { store: 'ok', migrations: 'ok', disk: 'read-only' } });
  });
});

