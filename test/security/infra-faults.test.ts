import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import { toAppError } from '../../src/http/plugins/errors.js';
import { infraFault } from '../../src/lib/infra-fault.js';
import type { OutputFiles } from '../../src/store/files/output-files.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import type { Log, RunOutputs } from '../../src/worker/run-job.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import type { Backend } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';

const MODEL = 'image/vendor-b/model-b-1';
const KIND_ORDER = ['hold', 'charge', 'release'];
const PROMPT = 'a red fox in the snow';

/** An error as Node's fs makes it: errno code, syscall and the absolute path in the message. */
function errnoError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  const text: Record<string, string> = {
    ENOSPC: 'no space left on device',
    EMFILE: 'too many open files',
    EROFS: 'read-only file system',
    ECONNREFUSED: 'connection refused',
  };
  return Object.assign(new Error(`${code}: ${text[code] ?? 'error'}, ${syscall} '${path}'`), { code, syscall, path, errno: -1 });
}

/** The run's file layer with faults injected: each queued errno code fails one `reset` (mkdir). */
class FaultyOutputs implements RunOutputs {
  readonly faults: string[] = [];
  constructor(private readonly inner: OutputFiles) {}
  async reset(key: string): Promise<string> {
    const code = this.faults.shift();
    if (code) throw errnoError(code, 'mkdir', join(this.inner.root, key));
    return this.inner.reset(key);
  }
  remove(key: string) {
    return this.inner.remove(key);
  }
  removeFile(key: string, name: string) {
    return this.inner.removeFile(key, name);
  }
  urlPath(key: string, name: string) {
    return this.inner.urlPath(key, name);
  }
}

interface Line {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}
class CapturingLog implements Log {
  readonly lines: Line[] = [];
  info(obj: object, msg: string) {
    this.lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg });
  }
  warn(obj: object, msg: string) {
    this.lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg });
  }
  error(obj: object, msg: string) {
    this.lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg });
  }
  alerts(jobId: string) {
    return this.lines.filter((l) => l.level === 'error' && l.obj.alert === 'infrastructure_fault' && l.obj.jobId === jobId);
  }
}

/** A store whose database connection can be cut: every call then fails as pg's does. */
function cuttableBackend(inner: Backend, cut: { down: boolean }): Backend {
  const lost = () => new Error('Connection terminated unexpectedly');
  const guard = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(obj, prop) {
        const v = Reflect.get(obj, prop, obj) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => (cut.down ? Promise.reject(lost()) : (v as (...a: unknown[]) => unknown).apply(obj, args));
      },
    });
  return {
    ...inner,
    async create() {
      const db = await inner.create();
      return {
        drop: db.drop,
        async open() {
          const store = await db.open();
          const wrapped: Store = {
            identity: store.identity,
            jobs: store.jobs,
            nodeApps: store.nodeApps,
            webhooks: store.webhooks,
            idempotency: store.idempotency,
            queue: guard(store.queue),
            billing: guard(store.billing),
            transaction: (fn) => (cut.down ? Promise.reject(lost()) : store.transaction(fn)),
            onEvent: (fn) => store.onEvent(fn),
            probe: (now) => store.probe(now),
            close: () => store.close(),
            ...(store.listen ? { listen: store.listen } : {}),
          };
          return wrapped;
        },
      };
    },
  };
}

let t: TestApp | undefined;
let worker: Worker | undefined;
let engine: ScriptedEngine;
afterEach(async () => {
  engine?.hold?.resolve();
  await worker?.stop(0);
  worker = undefined;
  await t?.close();
  t = undefined;
});

const settle = () => new Promise((r) => setTimeout(r, 40));

describe.each(backends)('infrastructure faults during a job run on $name', (backend) => {
  let outputs: FaultyOutputs;
  let log: CapturingLog;
  let app: TestApp;

  async function start(opts: { maxFaultRetries?: number; backend?: Backend } = {}) {
    app = t = await createTestApp({ backend: opts.backend ?? backend, runPolicy: { maxFaultRetries: opts.maxFaultRetries ?? 3, leaseMs: 30_000 } });
    engine = new ScriptedEngine();
    outputs = new FaultyOutputs(app.outputs);
    log = new CapturingLog();
    worker = new Worker(
      { ...app.services, outputs, engine, loadInput: () => Promise.reject(new Error('no inputs here')), log },
      { concurrency: 1, pollMs: 1000 },
    );
    worker.start();
  }
  const create = async () => {
    const res = await generate(app, MODEL, { prompt: PROMPT });
    expect(res.statusCode).toBe(200);
    return (res.json() as { job_id: string }).job_id;
  };
  const view = async (id: string) => (await get(app, `/jobs/${id}`)).json() as Json & { status: string };
  const record = async (id: string) => (await app.services.runs.find(id))!;
  const handedBack = (id: string, faults: number) =>
    waitFor(async () => {
      const r = await record(id);
      return r.status === 'queued' && r.faultCount === faults && r;
    }, `job ${id} handed back ${faults} times`);
  /**
   * Moves the clock once the worker is idle: no run (a run sleeps on its heartbeat and timeout)
   * and the loop waiting on its poll, so the move wakes it instead of passing it by mid-claim.
   */
  const advanceWhenIdle = async (ms: number) => {
    await waitFor(async () => app.clock.sleepers === 1, 'the worker to wait for its poll');
    app.clock.advance(ms);
  };
  const ended = (id: string, status: string) => waitFor(async () => (await view(id)).status === status && view(id), `job ${id} ${status}`);
  /** The job's ledger entries by kind, in a fixed order (entries written in one microsecond have none). */
  const entriesOf = async (id: string) =>
    (await app.store.billing.listEntries(app.workspaceId))
      .filter((e) => e.jobId === id)
      .map((e) => e.kind)
      .sort((a, b) => KIND_ORDER.indexOf(a) - KIND_ORDER.indexOf(b));

  it('hands a job back to the queue with a backoff on a disk-full write, unbilled, then completes it and bills it once', async () => {
    await start();
    outputs.faults.push('ENOSPC');
    const id = await create();
    const back = await handedBack(id, 1);
    expect(back.runAfter).toBe((app.clock.nowMs() + 5_000) * 1000);
    expect(back.leaseId).toBeNull();
    // Queued again, with no error: the client sees a job that has not run yet.
    const queued = await view(id);
    expect([queued.status, queued.error ?? null, queued.result ?? null]).toEqual(['queued', null, null]);
    expect(await entriesOf(id)).toEqual(['hold']);
    const { held } = await expectLedgerConsistent(app.store, app.workspaceId);
    expect(held).toBeGreaterThan(0);

    const [alert] = log.alerts(id);
    expect(alert!.obj).toMatchObject({ alert: 'infrastructure_fault', jobId: id, errno: 'ENOSPC', kind: 'disk_full', retryInMs: 5_000 });
    expect(JSON.stringify(log.lines)).not.toContain(PROMPT);

    // Not claimed before its backoff ends.
    await advanceWhenIdle(4_000);
    await settle();
    expect((await record(id)).status).toBe('queued');
    expect(engine.started).toEqual([]);
    await advanceWhenIdle(1_000);
    await ended(id, 'completed');
    expect(engine.finished).toEqual([id]);
    expect(await entriesOf(id)).toEqual(['hold', 'charge']);
    expect((await expectLedgerConsistent(app.store, app.workspaceId)).held).toBe(0);
    const done = await record(id);
    expect({ attempts: done.attempts, faultCount: done.faultCount, runAfter: done.runAfter }).toEqual({ attempts: 2, faultCount: 1, runAfter: null });
  });

  it('fails the job with server_unavailable after its allowance of faults, releases the hold and tells the client it was not billed', async () => {
    await start({ maxFaultRetries: 2 });
    outputs.faults.push('EMFILE', 'EROFS', 'ENOSPC');
    const balanceBefore = (await app.store.billing.getBalance(app.workspaceId)).balanceMicros;
    const id = await create();
    await handedBack(id, 1);
    await advanceWhenIdle(5_000);
    const second = await handedBack(id, 2);
    expect(second.runAfter).toBe((app.clock.nowMs() + 30_000) * 1000);
    await advanceWhenIdle(30_000);
    const failed = await ended(id, 'failed');
    const error = failed.error as { code: string; message: string };
    expect(error.code).toBe('server_unavailable');
    expect(error.message).toBe('the server could not run the job because its disk is full; you were not billed, submit it again later');
    expect(error.message).not.toMatch(/\/|ENOSPC|mkdir/);
    expect(await entriesOf(id)).toEqual(['hold', 'release']);
    const ledger = await expectLedgerConsistent(app.store, app.workspaceId);
    expect(ledger).toEqual({ balance: balanceBefore, held: 0 });
    expect(engine.started).toEqual([]);

    const alerts = log.alerts(id);
    expect(alerts.map((a) => a.obj.errno)).toEqual(['EMFILE', 'EROFS', 'ENOSPC']);
    expect(alerts[2]!.obj.gaveUp).toBe(true);
    // The server log keeps the whole story, path and syscall included.
    expect(JSON.stringify(alerts[2]!.obj.err)).toContain(app.outputs.root);
  });

  it("treats an engine's engine_failed wrapping a disk-full error (as its cause or only in its text) as a fault, but not a refused input fetch", async () => {
    await start();
    engine.failWith = Object.assign(new EngineError('engine_failed', 'local engine failed while rendering: ENOSPC: no space left on device, write'), {
      cause: errnoError('ENOSPC', 'write', join(app.outputs.root, 'x', 'output.png')),
    });
    const viaCause = await create();
    expect((await handedBack(viaCause, 1)).status).toBe('queued');

    engine.failWith = new EngineError('engine_failed', 'ffmpeg exited with code 1: av_interleaved_write_frame(): No space left on device');
    const viaText = await create();
    await handedBack(viaText, 1);

    engine.failWith = Object.assign(new EngineError('input_fetch_failed', 'image_url: the connection was refused'), {
      cause: errnoError('ECONNREFUSED', 'connect', '203.0.113.9:443'),
    });
    const input = await create();
    expect((await ended(input, 'failed')).error).toEqual({ code: 'input_fetch_failed', message: 'image_url: the connection was refused' });
    expect(await entriesOf(input)).toEqual(['hold', 'release']);
    expect(log.alerts(input)).toEqual([]);
  });

  it('never shows the client a server path: engine_failed and raw errors get a fixed sentence, other messages are scrubbed; the log has the detail', async () => {
    await start();
    const secretPath = join(app.outputs.root, 'work-123', 'frame.png');
    engine.failWith = new EngineError('engine_failed', `local engine failed while rendering: cannot read ${secretPath}`);
    const a = await create();
    expect((await ended(a, 'failed')).error).toEqual({ code: 'engine_failed', message: 'the engine failed unexpectedly' });
    const logged = log.lines.find((l) => l.obj.jobId === a && l.msg === 'engine failed')!;
    expect(logged.level).toBe('error');
    expect(JSON.stringify(logged.obj.err)).toContain(secretPath);

    engine.failWith = Object.assign(new TypeError(`Cannot read properties of undefined at ${secretPath}:10:4`), {});
    const b = await create();
    expect((await ended(b, 'failed')).error).toEqual({ code: 'engine_failed', message: 'the engine failed unexpectedly' });
    expect(JSON.stringify(log.lines.find((l) => l.obj.jobId === b && l.msg === 'engine failed')!.obj.err)).toContain('stack');

    engine.failWith = new EngineError('input_invalid', `init_video is not a usable video: ${secretPath}: Invalid data found when processing input`);
    const c = await create();
    expect((await ended(c, 'failed')).error).toEqual({
      code: 'input_invalid',
      message: 'init_video is not a usable video: <path>: Invalid data found when processing input',
    });
    expect(JSON.stringify(await view(c))).not.toContain(app.outputs.root);
  });

  it('survives a lost database: the hand-back cannot be written, nothing crashes, the lease expires and the job is requeued and completed once', async () => {
    const cut = { down: false };
    await start({ backend: cuttableBackend(backend, cut) });
    engine.hold = deferred();
    const id = await create();
    await waitFor(async () => (await view(id)).status === 'sampling', 'sampling');
    cut.down = true;
    engine.hold.resolve();
    const alert = await waitFor(async () => log.alerts(id)[0], 'the alert');
    expect(alert.obj).toMatchObject({ errno: 'connection_lost', kind: 'database_unreachable' });
    expect(alert.obj.handBackError).toBeDefined();
    cut.down = false;
    // The job still looks like it runs: its lease, not the worker, decides now.
    expect((await record(id)).status).toBe('sampling');
    engine.hold = undefined;
    await advanceWhenIdle(31_000);
    await ended(id, 'completed');
    expect(await entriesOf(id)).toEqual(['hold', 'charge']);
    expect((await expectLedgerConsistent(app.store, app.workspaceId)).held).toBe(0);
    // The worker goes on taking work.
    const next = await create();
    await ended(next, 'completed');
  });
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
      const e1 = toAppError(full as Error, undefined, 'POST');
      expect([e1.status, e1.message, e1.headers['retry-after']]).toEqual([503, 'the server cannot store new jobs right now: its disk is full; retry later', '30']);

      const ro = new SQLite(file, { readonly: true });
      let readOnly: unknown;
      try {
        ro.prepare('INSERT INTO t VALUES (1)').run();
      } catch (err) {
        readOnly = err;
      }
      ro.close();
      expect((readOnly as { code: string }).code).toMatch(/^SQLITE_READONLY/);
      const e2 = toAppError(readOnly as Error, undefined, 'POST');
      expect([e2.status, e2.message]).toEqual([503, 'the server cannot store new jobs right now: its storage is read-only; retry later']);
      expect(toAppError(new Error('a bug'), undefined, 'POST').status).toBe(500);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('classifies PostgreSQL connection failures, and not input-side network errors', () => {
    expect(infraFault(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))?.kind).toBe('database_unreachable');
    expect(infraFault(Object.assign(new Error('x'), { code: '08006' }))?.kind).toBe('database_unreachable');
    expect(infraFault(new Error('Connection terminated unexpectedly'))?.kind).toBe('database_unreachable');
    expect(infraFault(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))?.kind).toBe('database_unreachable');
    expect(infraFault(Object.assign(new EngineError('input_fetch_failed', 'x'), { cause: Object.assign(new Error('y'), { code: 'ECONNRESET' }) }))).toBeUndefined();
    expect(infraFault(Object.assign(new Error('unique violation'), { code: '23505' }))).toBeUndefined();
    expect(infraFault(new Error('wrapped', { cause: new Error('deeper', { cause: errnoError('ENFILE', 'open', '/x') }) }))?.kind).toBe('too_many_files');
  });

  it("finds the fault behind the local engine's catch-all, which keeps the error as its cause and its text as detail", () => {
    const disk = errnoError('ENOSPC', 'write', '/data/outputs/k/output.png');
    const wrapped = new EngineError('engine_failed', 'the local engine failed while rendering', { detail: disk.stack, cause: disk });
    expect(wrapped.cause).toBe(disk);
    expect(infraFault(wrapped)).toEqual({ kind: 'disk_full', code: 'ENOSPC' });
    // A decoder's stderr kept only as text still names the fault.
    const stderrOnly = new EngineError('engine_failed', 'the local engine failed while rendering', { detail: 'output.mp4: No space left on device' });
    expect(infraFault(stderrOnly)?.kind).toBe('disk_full');
    expect(infraFault(new EngineError('input_invalid', 'image_url is not a usable image', { detail: 'pngload: bad header' }))).toBeUndefined();
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
    worker = new Worker({ ...app.services, engine, loadInput: () => Promise.reject(new Error('no inputs here')), log }, { concurrency: 1, pollMs: 1000 });
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

