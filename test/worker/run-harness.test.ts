import { writeFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineError, RetryableEngineError, RunStopped } from '../../src/engines/engine.js';
import type { Engine, EngineContext, EngineJob, EngineStage, OutputFile } from '../../src/engines/engine.js';
import { systemClock } from '../../src/lib/clock.js';
import type { Log } from '../../src/lib/log.js';
import { HELD, lost } from '../../src/services/jobs/run-outcomes.js';
import type { Held, Lost } from '../../src/services/jobs/run-outcomes.js';
import { COMPLETED, runHarnessed } from '../../src/worker/run-harness.js';
import type { Completed, RunEnd, RunSink } from '../../src/worker/run-harness.js';
import { WorkerClient } from '../../src/worker/remote/protocol-client.js';
import { RemoteWorker } from '../../src/worker/remote/remote-worker.js';
import { TIMEOUT_MESSAGE } from '../../src/worker/remote/run-remote-job.js';
import { createTestApp, generate, jobEnd } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { FakeWorkerServer } from '../helpers/fake-worker-server.js';
import { waitFor } from '../helpers/scripted-engine.js';

const quiet: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const JOB: EngineJob = { id: 'job-1', model: 'image/x', request: {} };

/** A sink that records what the harness writes; `answers` scripts what its moves answer. */
class RecordingSink implements RunSink<'disk'> {
  readonly stages: Array<[EngineStage, string | undefined]> = [];
  readonly ends: Array<RunEnd<'disk'>> = [];
  completed: readonly OutputFile[] | undefined;
  beats = 0;
  beatAnswer: Held | Lost = HELD;
  stageAnswer: Held | Lost = HELD;
  readonly dir = mkdtempSync(join(tmpdir(), 'mediagen-harness-'));
  closed = false;

  constructor(readonly deadlineMs = Date.now() + 60_000) {}
  beatInMs(): number {
    return 20;
  }
  async beat(): Promise<Held | Lost> {
    this.beats++;
    return this.beatAnswer;
  }
  async open(): Promise<string> {
    return this.dir;
  }
  loadInput(): Promise<Buffer> {
    return Promise.resolve(Buffer.alloc(0));
  }
  loadStyle(): Promise<Record<string, unknown>> {
    return Promise.resolve({});
  }
  async loadUpstream() {
    return undefined;
  }
  async saveUpstream(): Promise<Held | Lost> {
    return HELD;
  }
  async stage(stage: EngineStage, preview: OutputFile | undefined): Promise<Held | Lost> {
    this.stages.push([stage, preview?.name]);
    return this.stageAnswer;
  }
  async complete(reported: readonly OutputFile[]): Promise<Completed | Lost> {
    this.completed = reported;
    return COMPLETED;
  }
  fault(reason: unknown): 'disk' | undefined {
    return (reason as { code?: string }).code === 'ENOSPC' ? 'disk' : undefined;
  }
  async settle(end: RunEnd<'disk'>): Promise<void> {
    this.ends.push(end);
  }
  async close(): Promise<void> {
    this.closed = true;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const engineOf = (run: (job: EngineJob, ctx: EngineContext) => Promise<OutputFile[]>): Engine => ({ name: 'test', run });

/** An engine that reaches `sampling` and waits to be stopped, keeping the stop's reason. */
function stoppable(reasons: unknown[]): Engine {
  return engineOf(async (_job, ctx) => {
    await ctx.stage('processing');
    await ctx.stage('sampling');
    return new Promise<never>((_, reject) => {
      const stop = () => {
        reasons.push(ctx.signal.reason);
        reject(ctx.signal.reason as Error);
      };
      if (ctx.signal.aborted) stop();
      else ctx.signal.addEventListener('abort', stop, { once: true });
    });
  });
}

const run = (engine: Engine, sink: RecordingSink, shutdown = new AbortController().signal) => runHarnessed(JOB, sink, { engine, clock: systemClock, log: quiet }, shutdown);

describe('the run harness', () => {
  it('forwards stages once and in order, whatever the engine reports, and moves the job to sampling before completing', async () => {
    const sink = new RecordingSink();
    await run(
      engineOf(async (_job, ctx) => {
        // Straight to sampling, a repeated processing, a preview twice: each stage is written once, in order.
        await ctx.stage('sampling');
        await ctx.stage('processing');
        await writeFile(join(ctx.outDir, 'preview.jpg'), 'p');
        await ctx.stage('intermediate-complete', { name: 'preview.jpg', contentType: 'image/jpeg' });
        await ctx.stage('intermediate-complete', { name: 'preview.jpg', contentType: 'image/jpeg' });
        return [{ name: 'output.png', contentType: 'image/png' }];
      }),
      sink,
    );
    expect(sink.stages).toEqual([
      ['processing', undefined],
      ['sampling', undefined],
      ['intermediate-complete', 'preview.jpg'],
    ]);
    expect(sink.completed).toEqual([{ name: 'output.png', contentType: 'image/png' }]);
    expect(sink.ends).toEqual([]);

    const quick = new RecordingSink();
    await run(
      engineOf(async () => [{ name: 'output.png', contentType: 'image/png' }]),
      quick,
    );
    expect(quick.stages.map(([s]) => s)).toEqual(['processing', 'sampling']);
    expect(quick.completed).toHaveLength(1);
    expect(quick.closed).toBe(true);
  });

  it("stops the engine with RunStopped('timeout') at the job's deadline, and the sink writes the timeout", async () => {
    const reasons: unknown[] = [];
    const sink = new RecordingSink(Date.now() + 150);
    await run(stoppable(reasons), sink);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(RunStopped);
    expect((reasons[0] as RunStopped).why).toBe('timeout');
    expect(sink.ends).toEqual([{ kind: 'stopped', why: 'timeout' }]);
  });

  it('a job already past its deadline is not run at all', async () => {
    let ran = false;
    const sink = new RecordingSink(Date.now() - 1);
    await run(
      engineOf(async () => {
        ran = true;
        return [];
      }),
      sink,
    );
    expect(ran).toBe(false);
    expect(sink.ends).toEqual([{ kind: 'stopped', why: 'timeout' }]);
  });

  it.each([
    ['cancelled', 'cancelled'],
    ['deleted', 'cancelled'],
    ['timeout', 'timeout'],
    ['lease_lost', 'lost'],
    ['completed', 'lost'],
  ] as const)('a heartbeat that finds the job %s stops the engine with RunStopped(%s) and settles as that loss', async (why, stop) => {
    const reasons: unknown[] = [];
    const sink = new RecordingSink();
    sink.beatAnswer = lost(why);
    await run(stoppable(reasons), sink);
    expect((reasons[0] as RunStopped).why).toBe(stop);
    expect(sink.ends).toEqual([{ kind: 'lost', lost: { kind: 'lost', why, outputsGo: why === 'cancelled' || why === 'deleted' } }]);
  });

  it('a refused stage stops the run with its loss before the engine goes on', async () => {
    const sink = new RecordingSink();
    sink.stageAnswer = lost('cancelled');
    let after = false;
    await run(
      engineOf(async (_job, ctx) => {
        await ctx.stage('processing');
        after = true;
        return [];
      }),
      sink,
    );
    expect(after).toBe(false);
    expect(sink.ends).toEqual([{ kind: 'lost', lost: lost('cancelled') }]);
  });

  it('classes failures once: a retryable error, an engine error, the sink’s fault, a stop an engine made up, and a shutdown', async () => {
    const endOf = async (err: Error) => {
      const sink = new RecordingSink();
      await run(
        engineOf(async () => {
          throw err;
        }),
        sink,
      );
      return sink.ends[0]!;
    };
    expect((await endOf(new RetryableEngineError('died'))).kind).toBe('retry');
    expect(await endOf(new EngineError('input_invalid', 'image_url is not an image'))).toMatchObject({ kind: 'failed', error: { code: 'input_invalid', message: 'image_url is not an image' } });
    expect(await endOf(Object.assign(new Error('full'), { code: 'ENOSPC' }))).toMatchObject({ kind: 'fault', fault: 'disk' });
    // A RunStopped no stop of the harness made says nothing of the job: the engine failed.
    expect(await endOf(new RunStopped('lost'))).toMatchObject({ kind: 'failed', error: { code: 'engine_failed' } });
    expect(await endOf(new RunStopped('timeout'))).toEqual({ kind: 'stopped', why: 'timeout' });

    const reasons: unknown[] = [];
    const sink = new RecordingSink();
    const shutdown = new AbortController();
    const done = run(stoppable(reasons), sink, shutdown.signal);
    await waitFor(async () => sink.stages.length === 2, 'sampling');
    shutdown.abort();
    await done;
    expect((reasons[0] as RunStopped).why).toBe('shutdown');
    expect(sink.ends).toEqual([{ kind: 'stopped', why: 'shutdown' }]);
  });
});

describe('both runners stop the engine at the deadline with RunStopped(timeout)', () => {
  let server: FakeWorkerServer;
  let worker: RemoteWorker | undefined;
  let t: TestApp | undefined;
  beforeEach(async () => {
    server = await new FakeWorkerServer().start();
  });
  afterEach(async () => {
    await worker?.stop(0);
    worker = undefined;
    await server.close();
    await t?.close();
    t = undefined;
  });

  function startWorker(engine: Engine): void {
    const client = new WorkerClient({ server: new URL(server.url), token: server.token, clock: systemClock, retry: { baseMs: 5, maxMs: 20 } });
    worker = new RemoteWorker({ client, engine, clock: systemClock, log: quiet, inputs: { maxBytes: 1024, timeoutMs: 5000 }, concurrency: 1, waitMs: 200, minClaimGapMs: 10 });
    worker.start();
  }

  it('the remote runner: at its deadline the engine gets RunStopped(timeout) and the worker reports the timeout, though the server said nothing', async () => {
    const reasons: unknown[] = [];
    startWorker(stoppable(reasons));
    server.enqueue({ id: 'late', deadline: new Date(Date.now() + 1500).toISOString() });
    await waitFor(async () => server.seen('progress', 'late').length > 0, 'sampling');
    await waitFor(async () => server.seen('fail', 'late').length > 0, 'the fail');
    expect(reasons.map((r) => (r instanceof RunStopped ? r.why : r))).toEqual(['timeout']);
    expect(server.seen('fail', 'late')[0]!.json).toEqual({ lease_id: 'lease-late', code: 'timeout', message: TIMEOUT_MESSAGE, retryable: false });
  });

  it('the remote runner: a 409 `deleted` stops the engine with RunStopped(cancelled), so it gives up its upstream work', async () => {
    const reasons: unknown[] = [];
    server.leaseMs = 600;
    server.handle = (c) => (c.path === '/worker/v1/jobs/gone/progress' && c.json?.status === undefined ? { status: 409, body: { error: 'the job no longer exists', reason: 'deleted' } } : undefined);
    startWorker(stoppable(reasons));
    server.enqueue({ id: 'gone', lease_expires_at: new Date(Date.now() + 600).toISOString() });
    await waitFor(async () => reasons.length > 0, 'the engine to be stopped');
    expect(reasons[0]).toBeInstanceOf(RunStopped);
    expect((reasons[0] as RunStopped).why).toBe('cancelled');
    await worker!.stop(1000);
    expect(server.seen('fail', 'gone')).toEqual([]);
  });

  it('the in-process runner: at its deadline the engine gets RunStopped(timeout) and the job fails with timeout', async () => {
    const reasons: unknown[] = [];
    t = await createTestApp({ runPolicy: { timeoutMs: () => 5000, leaseMs: 600_000 }, worker: { engine: stoppable(reasons), pollMs: 20 } });
    const res = await generate(t, 'image/vendor-b/model-b-1', { prompt: 'slow' });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json<{ job_id: string }>().job_id;
    await waitFor(async () => (await t!.services.runs.find(id))?.status === 'sampling' || undefined, 'sampling');
    t.clock.advance(5000);
    const job = await jobEnd(t, id);
    expect(job).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
    expect(reasons.map((r) => (r instanceof RunStopped ? r.why : r))).toEqual(['timeout']);
  });
});
