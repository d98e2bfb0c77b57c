import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { createTestApp, generate, get, jobEnd, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import type { Log } from '../../src/lib/log.js';
import { COULD_NOT_START_MESSAGE } from '../../src/engines/command/command-pool.js';
import { FIXTURES, captureLog } from './command-fixtures.js';

/**
 * Whole job runs of a model bound to a command engine (docs/engines.md) through the runtime: the
 * config's `commands` and a custom model's `command:<name>` binding, a real Python process.
 */

const MODEL = 'image/acme/cmd-v1';
const DECL = {
  path: MODEL,
  kind: 'image',
  request: {
    type: 'object',
    properties: {
      prompt: { type: 'string', maxLength: 200, description: 'What to draw.' },
      act: { type: 'string', enum: ['ok', 'crash', 'honour-cancel'], default: 'ok', description: 'What the fixture server does.' },
      width: { type: 'integer', minimum: 1, maximum: 64, default: 12, description: 'Width.' },
    },
    required: ['prompt'],
  },
  price: { fixed: '0.01' },
  engine: 'command:fixture',
};
/** The same model with a short timeout, on the same command. */
const SLOW = 'image/acme/cmd-slow-v1';
/** A model whose command cannot start: its script imports a module that is not installed. */
const BROKEN = 'image/acme/cmd-broken-v1';

describe.each(backends)('command engine runs: $name', { timeout: 60_000 }, (backend) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const app = ({ log = silentLog, realClock = true }: { log?: Log; realClock?: boolean } = {}) =>
    createTestApp({
      backend,
      realClock,
      models: [DECL, { ...DECL, path: SLOW, timeout_ms: 2000 }, { ...DECL, path: BROKEN, engine: 'command:broken', timeout_ms: 1000 }],
      commands: {
        raw: { fixture: { argv: ['python3', 'command-server.py'], cancel_grace_ms: 300 }, broken: { argv: ['python3', 'command-missing-module.py'] } },
        dir: FIXTURES,
      },
      worker: { pollMs: 50, log },
      runPolicy: { maxAttempts: 2 },
    });
  const ended = (id: string) => jobEnd(t!, id, 30_000);

  it('runs a job on the model process: a preview on the way, the PNG stored and served, billed once', async () => {
    t = await app();
    const res = await generate(t, MODEL, { prompt: 'a fox', width: 12 });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json<{ job_id: string }>().job_id;
    const job = await ended(id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const file = await t.app.inject({ method: 'GET', url: new URL((job.result as { urls: string[] }).urls[0]!).pathname });
    const meta = await sharp(file.rawPayload).metadata();
    expect({ format: meta.format, width: meta.width }).toEqual({ format: 'png', width: 12 });
    const timeline = (await get(t, `/jobs/${id}/details`)).json<{ timeline: { status: string }[] }>().timeline.map((s) => s.status);
    expect(timeline).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete', 'completed']);
    expect((await t.store.billing.entriesOfJob(id)).filter((e) => e.kind === 'charge')).toHaveLength(1);
  });

  it('a process that dies mid-job hands the job back for another attempt, and fails it unbilled once the attempts are spent', async () => {
    t = await app();
    const res = await generate(t, MODEL, { prompt: 'a fox', act: 'crash' });
    const id = res.json<{ job_id: string }>().job_id;
    const job = await ended(id);
    expect(job.error).toMatchObject({ code: 'engine_failed' });
    const timeline = (await get(t, `/jobs/${id}/details`)).json<{ timeline: { status: string }[] }>().timeline.map((s) => s.status);
    // Two attempts: each claimed (scheduled) and run, the first handed back to the queue.
    expect(timeline.filter((s) => s === 'scheduled')).toHaveLength(2);
    expect(timeline).toContain('queued');
    expect((await t.store.billing.entriesOfJob(id)).map((e) => e.kind).sort()).toEqual(['hold', 'release']);
    // The process was restarted: the next job runs.
    const next = await ended((await generate(t, MODEL, { prompt: 'a cat' })).json<{ job_id: string }>().job_id);
    expect(next.status).toBe('completed');
  });

  it("stops a job at its model's timeout in its process (the runner's deadline, the engine keeping none): timeout, unbilled", async () => {
    const log = captureLog();
    t = await app({ log });
    // The process is started and ready first, so the job reaches it well before its 2 s are over.
    expect((await ended((await generate(t, MODEL, { prompt: 'a cat' })).json<{ job_id: string }>().job_id)).status).toBe('completed');
    const id = (await generate(t, SLOW, { prompt: 'a fox', act: 'honour-cancel' })).json<{ job_id: string }>().job_id;
    const job = await ended(id);
    expect(job.error).toMatchObject({ code: 'timeout' });
    expect((await t.store.billing.entriesOfJob(id)).map((e) => e.kind).sort()).toEqual(['hold', 'release']);
    expect(log.lines.some((l) => l.msg === 'job stopped in its command process' && l.obj.jobId === id && l.obj.why === 'timeout')).toBe(true);
  });

  it('fails a job whose command cannot start (a missing Python module) with server_unavailable, after one attempt, unbilled; the traceback only in the log', async () => {
    // The test's ManualClock stands still: the job's deadline, 1 s after its claim, cannot pass while
    // the process starts, however slow the machine; a second start would come 1 s after the first
    // failed one, not before the deadline, so the job fails at the first failed start.
    const log = captureLog();
    t = await app({ log, realClock: false });
    const id = (await generate(t, BROKEN, { prompt: 'a fox' })).json<{ job_id: string }>().job_id;
    const job = await ended(id);
    expect(job.error).toEqual({ code: 'server_unavailable', message: COULD_NOT_START_MESSAGE });
    const timeline = (await get(t, `/jobs/${id}/details`)).json<{ timeline: { status: string }[] }>().timeline.map((s) => s.status);
    expect(timeline.filter((s) => s === 'scheduled')).toHaveLength(1);
    expect((await t.store.billing.entriesOfJob(id)).map((e) => e.kind).sort()).toEqual(['hold', 'release']);
    const failed = log.lines.find((l) => l.msg === 'command process ended before it was ready');
    expect((failed?.obj.stderrTail as string[]).at(-1)).toBe("ModuleNotFoundError: No module named 'mediagen_fixture_missing_module'");
  });
});
