import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import type { Engine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import { systemClock } from '../../src/lib/clock.js';
import type { Log } from '../../src/lib/log.js';
import { ENGINE_FAILED_MESSAGE } from '../../src/worker/job-errors.js';
import { WorkerClient } from '../../src/worker/remote/protocol-client.js';
import { RemoteWorker } from '../../src/worker/remote/remote-worker.js';
import { SHUTDOWN_MESSAGE } from '../../src/worker/remote/run-remote-job.js';
import { FakeWorkerServer } from '../helpers/fake-worker-server.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';

const lines: Array<{ obj: object; msg: string }> = [];
const log: Log = {
  info: (obj, msg) => lines.push({ obj, msg }),
  warn: (obj, msg) => lines.push({ obj, msg }),
  error: (obj, msg) => lines.push({ obj, msg }),
};

let server: FakeWorkerServer;
let worker: RemoteWorker | undefined;

function startWorker(engine: Engine, extra: Partial<ConstructorParameters<typeof RemoteWorker>[0]> = {}, token = server.token): RemoteWorker {
  const client = new WorkerClient({ server: new URL(server.url), token, clock: systemClock, retry: { baseMs: 5, maxMs: 20 } });
  worker = new RemoteWorker({ client, engine, clock: systemClock, log, inputs: { maxBytes: 1024, timeoutMs: 5000 }, concurrency: 1, waitMs: 200, minClaimGapMs: 10, workerId: 'test-box', ...extra });
  worker.start();
  return worker;
}

/** An engine whose run is the given function. */
const engineOf = (run: (job: EngineJob, ctx: EngineContext) => Promise<OutputFile[]>): Engine => ({ name: 'test', run });

beforeEach(async () => {
  lines.length = 0;
  server = await new FakeWorkerServer().start();
});

afterEach(async () => {
  await worker?.stop(0);
  worker = undefined;
  await server.close();
});

describe('remote worker over the protocol', () => {
  it('runs a claimed job: stages as progress, the preview uploaded before its status, outputs uploaded, then complete', async () => {
    const engine = new ScriptedEngine();
    startWorker(engine);
    server.enqueue({ id: 'j1' });
    await waitFor(async () => server.seen('complete', 'j1').length > 0, 'complete');

    const claim = server.seen('claim')[0]!;
    expect(claim.authorization).toBe('Bearer mgw_test');
    expect(claim.json).toMatchObject({ max: 1, wait_ms: 200, worker_id: 'test-box' });
    const jobCalls = server.calls.filter((c) => c.path.startsWith('/worker/v1/jobs/j1/') && !(c.path.endsWith('/progress') && c.json?.status === undefined));
    expect(jobCalls.map((c) => `${c.method} ${c.path.slice('/worker/v1/jobs/j1/'.length)} ${String(c.json?.status ?? '')}`.trim())).toEqual([
      'POST progress processing',
      'POST progress sampling',
      'PUT outputs/preview.jpg',
      'POST progress intermediate-complete',
      'PUT outputs/output.png',
      'POST complete',
    ]);
    for (const c of jobCalls) {
      expect(c.authorization).toBe('Bearer mgw_test');
      if (c.method === 'PUT') expect(c.query.get('lease_id')).toBe('lease-j1');
      else expect(c.json?.lease_id).toBe('lease-j1');
    }
    expect(jobCalls[3]!.json?.preview).toBe('preview.jpg');
    expect(jobCalls[4]!.contentType).toBe('image/png');
    expect(server.uploads.get('output.png')!.toString()).toBe('output of j1');
    expect(server.seen('complete', 'j1')[0]!.json).toEqual({ lease_id: 'lease-j1', outputs: [{ name: 'output.png' }] });
    expect(server.seen('fail', 'j1')).toEqual([]);
  });

  it("sends roles, keys and a measured duration, and a training run's style as `style`, not as an upload", async () => {
    startWorker(
      engineOf(async (_job, ctx) => {
        await writeFile(join(ctx.outDir, 'model.glb'), 'glb');
        await writeFile(join(ctx.outDir, 'preview.png'), 'png');
        await writeFile(join(ctx.outDir, 'style.json'), JSON.stringify({ version: 1, palette: ['#fff'] }));
        return [
          { name: 'model.glb', contentType: 'model/gltf-binary', role: 'model', durationUs: 1_500_000 },
          { name: 'preview.png', contentType: 'image/png', role: 'preview', key: 'cover' },
          { name: 'style.json', contentType: 'application/json', role: 'style' },
        ];
      }),
    );
    server.enqueue({ id: 'j2' });
    await waitFor(async () => server.seen('complete', 'j2').length > 0, 'complete');
    expect(server.seen('complete', 'j2')[0]!.json).toEqual({
      lease_id: 'lease-j2',
      outputs: [
        { name: 'model.glb', role: 'model', duration_us: 1_500_000 },
        { name: 'preview.png', role: 'preview', key: 'cover' },
      ],
      style: { version: 1, palette: ['#fff'] },
    });
    expect([...server.uploads.keys()].sort()).toEqual(['model.glb', 'preview.png']);
  });

  it("fails the job with an EngineError's code and message, not retryable", async () => {
    startWorker(
      engineOf(async () => {
        throw new EngineError('input_invalid', 'image_url is not a usable image: it cannot be decoded', { detail: 'libvips said /secret/path' });
      }),
    );
    server.enqueue({ id: 'j3' });
    await waitFor(async () => server.seen('fail', 'j3').length > 0, 'fail');
    expect(server.seen('fail', 'j3')[0]!.json).toEqual({
      lease_id: 'lease-j3',
      code: 'input_invalid',
      message: 'image_url is not a usable image: it cannot be decoded',
      retryable: false,
    });
    expect(server.seen('complete', 'j3')).toEqual([]);
  });

  it('an unexpected error fails the job with the fixed engine_failed message; its details stay in the local log', async () => {
    startWorker(
      engineOf(async () => {
        throw new Error('ENOENT-ish trouble at /home/gpu/models/weights.bin');
      }),
    );
    server.enqueue({ id: 'j4' });
    await waitFor(async () => server.seen('fail', 'j4').length > 0, 'fail');
    expect(server.seen('fail', 'j4')[0]!.json).toEqual({ lease_id: 'lease-j4', code: 'engine_failed', message: ENGINE_FAILED_MESSAGE, retryable: false });
    expect(JSON.stringify(lines)).toContain('/home/gpu/models/weights.bin');
  });

  it('a 409 on progress (the job was cancelled) aborts the engine and sends nothing more', async () => {
    const engine = new ScriptedEngine();
    engine.hold = deferred();
    server.leaseMs = 600; // heartbeats every ~200 ms
    server.handle = (c) => (c.path === '/worker/v1/jobs/j5/progress' && c.json?.status === undefined ? { status: 409, body: { error: 'the job was cancelled', reason: 'cancelled' } } : undefined);
    startWorker(engine);
    server.enqueue({ id: 'j5', lease_expires_at: new Date(Date.now() + 600).toISOString() });
    await waitFor(async () => engine.aborted.includes('j5'), 'the engine to be aborted');
    await worker!.stop(1000);
    expect(server.seen('fail', 'j5')).toEqual([]);
    expect(server.seen('complete', 'j5')).toEqual([]);
    expect(lines.some((l) => l.msg === 'job run stopped by the server' && (l.obj as { why?: string }).why === 'cancelled')).toBe(true);
  });

  it('heartbeats (progress without a status) every third of the lease while the engine works', async () => {
    const engine = new ScriptedEngine();
    engine.hold = deferred();
    server.leaseMs = 600;
    startWorker(engine);
    server.enqueue({ id: 'j6', lease_expires_at: new Date(Date.now() + 600).toISOString() });
    await waitFor(async () => server.seen('progress', 'j6').filter((c) => c.json?.status === undefined).length >= 3, 'three heartbeats');
    engine.hold.resolve();
    await waitFor(async () => server.seen('complete', 'j6').length > 0, 'complete');
  });

  it('at shutdown, a job still running after the grace is handed back with fail … retryable: true', async () => {
    const engine = new ScriptedEngine();
    engine.hold = deferred();
    startWorker(engine);
    server.enqueue({ id: 'j7' });
    await waitFor(async () => engine.sampling.includes('j7'), 'sampling');
    await worker!.stop(50);
    expect(engine.aborted).toEqual(['j7']);
    expect(server.seen('fail', 'j7').map((c) => c.json)).toEqual([{ lease_id: 'lease-j7', code: 'engine_failed', message: SHUTDOWN_MESSAGE, retryable: true }]);
  });

  it('at shutdown, a job that finishes within the grace completes', async () => {
    const engine = new ScriptedEngine();
    engine.hold = deferred();
    startWorker(engine);
    server.enqueue({ id: 'j8' });
    await waitFor(async () => engine.sampling.includes('j8'), 'sampling');
    const stopped = worker!.stop(10_000);
    setTimeout(() => engine.hold!.resolve(), 50);
    await stopped;
    expect(server.seen('complete', 'j8')).toHaveLength(1);
    expect(server.seen('fail', 'j8')).toEqual([]);
  });

  it('claims as many jobs as it has free slots, and runs them at once', async () => {
    const engine = new ScriptedEngine();
    engine.hold = deferred();
    server.enqueue({ id: 'a' });
    server.enqueue({ id: 'b' });
    server.enqueue({ id: 'c' });
    startWorker(engine, { concurrency: 2, models: ['image/*'], pool: 'gpu-a' });
    await waitFor(async () => engine.sampling.length === 2, 'two jobs sampling');
    expect(server.seen('claim')[0]!.json).toMatchObject({ max: 2, models: ['image/*'], pool: 'gpu-a' });
    expect(server.queue.map((j) => j.id)).toEqual(['c']);
    engine.hold.resolve();
    await waitFor(async () => server.seen('complete').length === 3, 'three completions');
  });

  it('a refused claim (a revoked token) ends the worker with the server’s words', async () => {
    const w = startWorker(new ScriptedEngine(), {}, 'mgw_revoked');
    await expect(w.done).rejects.toThrow(/HTTP 401: unknown worker token/);
  });

  it('retries a claim while the server answers 503, and never logs the token', async () => {
    let refusals = 3;
    server.handle = (c) => (c.path === '/worker/v1/claim' && refusals-- > 0 ? { status: 503, body: { error: 'busy' } } : undefined);
    startWorker(new ScriptedEngine(), { maxClaimBackoffMs: 20 });
    server.enqueue({ id: 'j9' });
    await waitFor(async () => server.seen('complete', 'j9').length > 0, 'complete', 15_000);
    expect(JSON.stringify(lines)).not.toContain('mgw_test');
  });
});
