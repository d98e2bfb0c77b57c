import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import type { DiskOutputStore } from '../../src/outputs/disk/disk-output-store.js';
import type { Store } from '../../src/store/store.js';
import type { RunOutputs } from '../../src/worker/run-job.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import type { Backend } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { CapturingLog, errnoError } from '../helpers/faults.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';

const MODEL = 'image/vendor-b/model-b-1';
const KIND_ORDER = ['hold', 'charge', 'release'];
const PROMPT = 'a red fox in the snow';


/** The run's output store with faults injected: each queued errno code fails one `scratch` (mkdir). */
class FaultyOutputs implements RunOutputs {
  readonly faults: string[] = [];
  constructor(private readonly inner: DiskOutputStore) {}
  scratch(key: string) {
    const code = this.faults.shift();
    if (code) return Promise.reject(errnoError(code, 'mkdir', join(this.inner.root, key)));
    return this.inner.scratch(key);
  }
  put(key: string, name: string, fromPath: string) {
    return this.inner.put(key, name, fromPath);
  }
  remove(key: string) {
    return this.inner.remove(key);
  }
  removeFile(key: string, name: string) {
    return this.inner.removeFile(key, name);
  }
  url(key: string, name: string) {
    return this.inner.url(key, name);
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
            parallelWrites: store.parallelWrites,
            identity: store.identity,
            jobs: store.jobs,
            nodeApps: store.nodeApps,
            webhooks: store.webhooks,
            idempotency: store.idempotency,
            assets: store.assets,
            styles: store.styles,
            workerTokens: store.workerTokens,
            upstreams: store.upstreams,
            tokenBudgets: store.tokenBudgets,
            routes: store.routes,
            openaiVideos: store.openaiVideos,
            stats: guard(store.stats),
            retention: store.retention,
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
      { ...app.services, outputs, engine, loadInput: () => Promise.reject(new Error('no inputs here')), loadStyle: () => Promise.reject(new Error('no styles here')), log },
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

