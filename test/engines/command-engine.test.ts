import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandEngine } from '../../src/engines/command/command-engine.js';
import { CommandRetryable } from '../../src/engines/command/command-pool.js';
import { EngineError, RetryableEngineError, RunStopped } from '../../src/engines/engine.js';
import { infraFault } from '../../src/lib/infra-fault.js';
import { MEDIA_URL_PATTERN } from '../../src/models/schema-kit.js';
import { captureLog, commandContext, commandEngine, pngSize } from './command-fixtures.js';
import type { CommandContext } from './command-fixtures.js';
import { TempDirs } from './engine-harness.js';

/**
 * The command engine against a real Python process (fixtures/command-server.py) speaking the
 * JSON-lines protocol: stages, progress, previews and outputs read by their headers; errors mapped;
 * crashes, ignored cancels and stops at the deadline; files outside the output directory refused;
 * concurrency. Processes that cannot start: command-starts.test.ts.
 */

const MODEL = 'image/acme/fixture-v1';
const SCHEMA = { type: 'object', properties: { image: { type: 'string', pattern: MEDIA_URL_PATTERN } } };
const models = { [MODEL]: { schema: SCHEMA, outputTypes: ['image/png'] } };
const dirs = new TempDirs();
const engines: CommandEngine[] = [];
let log = captureLog();

function engine(block: Record<string, unknown> = {}): CommandEngine {
  const e = commandEngine({ argv: ['python3', 'command-server.py'], cancel_grace_ms: 300, ...block }, models, log);
  engines.push(e);
  return e;
}

async function run(e: CommandEngine, request: Record<string, unknown>, ctx?: CommandContext, id = `job-${Math.random().toString(36).slice(2)}`) {
  const c = ctx ?? commandContext(await dirs.make());
  const outputs = await e.run({ id, model: MODEL, request }, c);
  return { outputs, ctx: c };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the run to fail');
    },
    (err: unknown) => err,
  );
}

afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  await dirs.cleanup();
  log = captureLog();
});

describe('command engine: a job through a long-running process', () => {
  it('reports processing, sampling with its progress and a preview, and returns the PNG the process wrote, read by its header', async () => {
    const e = engine();
    const { outputs, ctx } = await run(e, { act: 'ok', width: 5, height: 3, prompt: 'a secret prompt' });
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling', 'intermediate-complete']);
    const preview = ctx.stages[2]!;
    expect(preview.preview).toEqual({ name: 'preview.png', contentType: 'image/png' });
    expect(preview.previewHead!.subarray(1, 4).toString()).toBe('PNG');
    expect(ctx.fractions).toEqual([0.1, 0.5, 0.9]);
    expect(outputs).toEqual([{ name: 'output.png', contentType: 'image/png' }]);
    expect(pngSize(await readFile(join(ctx.outDir, 'output.png')))).toEqual({ width: 5, height: 3 });
    // Its other stdout lines and its stderr are logged with the job; the input never is.
    const job = log.lines.filter((l) => l.obj.jobId !== undefined);
    expect(job.some((l) => l.obj.stdout === "this line is not the protocol's")).toBe(true);
    expect(job.some((l) => l.obj.stderr === 'a warning on stderr')).toBe(true);
    expect(JSON.stringify(log.lines)).not.toContain('secret prompt');
  });

  it('keeps one process for many jobs: the model stays loaded', async () => {
    const e = engine();
    await run(e, { act: 'ok' });
    const [pid] = e.pids;
    await run(e, { act: 'ok' });
    await run(e, { act: 'ok' });
    expect(e.pids).toEqual([pid]);
  });

  it('gives media inputs to the process as files, loaded through the run', async () => {
    const e = engine();
    const ctx = commandContext(await dirs.make());
    const png = await tinyPng();
    const { outputs } = await run(e, { act: 'echo-input', image: `data:image/png;base64,${png.toString('base64')}` }, ctx);
    expect(ctx.loaded).toEqual(['image']);
    expect(await readFile(join(ctx.outDir, outputs[0]!.name))).toEqual(png);
  });

  it('fails the job with the code the process gives, its message cleaned of the job directory', async () => {
    const e = engine();
    const err = await failure(run(e, { act: 'error', code: 'input_invalid', message: 'the mask at OUT/mask.png is empty' }));
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).code).toBe('input_invalid');
    expect((err as EngineError).message).toBe('the mask at <path>/mask.png is empty');
    // Codes that are not a process's to give, or no code of ours at all: engine_failed.
    for (const code of ['out_of_memory', 'timeout', 'server_unavailable']) {
      const other = await failure(run(e, { act: 'error', code, message: 'no' }));
      expect((other as EngineError).code).toBe('engine_failed');
    }
    expect(e.pids).toHaveLength(1);
  });

  it('hands a job back when the process says another attempt may succeed', async () => {
    const e = engine();
    const err = await failure(run(e, { act: 'error', code: 'engine_failed', message: 'CUDA out of memory', retryable: true }));
    expect(err).toBeInstanceOf(CommandRetryable);
    expect(err).not.toBeInstanceOf(EngineError);
    // The runners hand it back as another attempt (RetryableEngineError), not as an infrastructure fault.
    expect(err).toBeInstanceOf(RetryableEngineError);
    expect(infraFault(err)).toBeUndefined();
  });

  it('hands the job back when its process dies mid-job, restarts the process and runs the next job', async () => {
    const e = engine();
    await run(e, { act: 'ok' });
    const [before] = e.pids;
    const ctx = commandContext(await dirs.make());
    const err = await failure(run(e, { act: 'crash' }, ctx));
    expect(err).toBeInstanceOf(CommandRetryable);
    expect(ctx.fractions).toEqual([0.2]);
    expect(log.lines.some((l) => l.msg.includes('ended during a job'))).toBe(true);
    const { outputs } = await run(e, { act: 'ok', width: 2, height: 2 });
    expect(outputs[0]!.contentType).toBe('image/png');
    // The server's logger writes its own `pid` on every line: a child's is `childPid`, so a JSON
    // reader never meets two `pid` keys in one line and loses one.
    expect(log.lines.filter((l) => 'pid' in l.obj)).toEqual([]);
    expect(log.lines.some((l) => l.msg.includes('ended during a job') && l.obj.childPid === before)).toBe(true);
    expect(e.pids).toHaveLength(1);
    expect(e.pids[0]).not.toBe(before);
  });
});

describe('command engine: cancels and deadlines', () => {
  it('sends cancel to a cancelled job; a process that ignores it is killed after the grace period and replaced', async () => {
    const e = engine({ cancel_grace_ms: 400 });
    const ctx = commandContext(await dirs.make(), { onProgress: () => ctx.controller.abort(new RunStopped('cancelled')) });
    await run(e, { act: 'ok' });
    const [before] = e.pids;
    const started = Date.now();
    const err = await failure(run(e, { act: 'ignore-cancel' }, ctx));
    expect(err).toBeInstanceOf(RunStopped);
    expect((err as RunStopped).why).toBe('cancelled');
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(log.lines.some((l) => l.msg.includes('did not stop a cancelled job in time'))).toBe(true);
    await run(e, { act: 'ok' });
    expect(e.pids[0]).not.toBe(before);
  });

  it('keeps a process that stops a cancelled job when asked', async () => {
    const e = engine({ cancel_grace_ms: 5000 });
    await run(e, { act: 'ok' });
    const [before] = e.pids;
    const ctx = commandContext(await dirs.make(), { onProgress: () => ctx.controller.abort(new RunStopped('cancelled')) });
    const err = await failure(run(e, { act: 'honour-cancel' }, ctx));
    expect((err as RunStopped).why).toBe('cancelled');
    await run(e, { act: 'ok' });
    expect(e.pids).toEqual([before]);
  });

  it('stops a job when the run is stopped at its deadline: cancel sent, RunStopped timeout, the process kept', async () => {
    const e = engine({ cancel_grace_ms: 5000 });
    await run(e, { act: 'ok' });
    const [before] = e.pids;
    const ctx = commandContext(await dirs.make(), { onProgress: () => ctx.controller.abort(new RunStopped('timeout')) });
    const err = await failure(run(e, { act: 'honour-cancel' }, ctx));
    expect(err).toBeInstanceOf(RunStopped);
    expect((err as RunStopped).why).toBe('timeout');
    expect(log.lines.some((l) => l.msg === 'job stopped in its command process' && l.obj.why === 'timeout')).toBe(true);
    await run(e, { act: 'ok' });
    expect(e.pids).toEqual([before]);
  });

  it("keeps no deadline timer of its own: the run's signal is the one stop, so a job past its deadline goes on until the runner stops it", async () => {
    const e = engine();
    const { outputs } = await run(e, { act: 'ok' }, commandContext(await dirs.make(), { deadlineMs: Date.now() - 1000 }));
    expect(outputs[0]!.contentType).toBe('image/png');
  });
});

describe('command engine: outputs are checked', () => {
  for (const how of ['path', 'symlink', 'dotdot']) {
    it(`refuses an output outside the output directory (${how})`, async () => {
      const e = engine();
      const ctx = commandContext(await dirs.make());
      const err = await failure(run(e, { act: 'outside', how }, ctx));
      expect(err).toBeInstanceOf(EngineError);
      expect((err as EngineError).code).toBe('engine_failed');
      expect((err as EngineError).detail).toContain('outside');
      expect((await readdir(ctx.outDir)).filter((n) => n.startsWith('output-'))).toEqual([]);
    });
  }

  it('names one output output.png and several output-1.png, output-2.png in their order, a file with a role by its role (the one naming rule)', async () => {
    const { outputs, ctx } = await run(engine(), { act: 'several' });
    expect(outputs).toEqual([
      { name: 'output-1.png', contentType: 'image/png' },
      { name: 'preview.png', contentType: 'image/png', role: 'preview' },
      { name: 'output-2.png', contentType: 'image/png' },
    ]);
    expect(pngSize(await readFile(join(ctx.outDir, 'output-1.png')))).toEqual({ width: 2, height: 2 });
    expect(pngSize(await readFile(join(ctx.outDir, 'output-2.png')))).toEqual({ width: 3, height: 2 });
    expect(pngSize(await readFile(join(ctx.outDir, 'preview.png')))).toEqual({ width: 3, height: 3 });
  });

  it('refuses a preview outside the output directory, stopping the job in its process, which stays', async () => {
    const e = engine({ cancel_grace_ms: 5000 });
    await run(e, { act: 'ok' });
    const [pid] = e.pids;
    const ctx = commandContext(await dirs.make());
    const err = await failure(run(e, { act: 'bad-preview' }, ctx));
    expect((err as EngineError).code).toBe('engine_failed');
    expect((err as EngineError).detail).toContain('outside');
    expect(ctx.stages.map((s) => s.stage)).toEqual(['processing', 'sampling']);
    await run(e, { act: 'ok' });
    expect(e.pids).toEqual([pid]);
  });

  it('refuses an output whose bytes are not of a type the model makes', async () => {
    const e = engine();
    const err = await failure(run(e, { act: 'wrong-type' }));
    expect((err as EngineError).code).toBe('engine_failed');
    expect((err as EngineError).detail).toMatch(/not one of image\/png/);
  });
});

describe('command engine: processes', () => {
  it('runs two jobs at once on two processes', async () => {
    const e = engine({ processes: 2 });
    const barrier = await mkdtemp(join(await dirs.make(), 'barrier-'));
    const [a, b] = await Promise.all([run(e, { act: 'barrier', dir: barrier, count: 2 }), run(e, { act: 'barrier', dir: barrier, count: 2 })]);
    expect(a.outputs[0]!.contentType).toBe('image/png');
    expect(b.outputs[0]!.contentType).toBe('image/png');
    expect(new Set(e.pids).size).toBe(2);
  });

  it('runs one job at a time on one process: a second job waits', async () => {
    const e = engine({ processes: 1 });
    const barrier = await mkdtemp(join(await dirs.make(), 'barrier-'));
    const at = { act: 'barrier', dir: barrier, count: 2, wait: 1 };
    const results = await Promise.allSettled([run(e, at), run(e, at)]);
    // The first to get the process waits alone at the barrier and gives up; the other then finds two marks.
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  }, 15_000);

  it('does not pass the server environment on: only the basics and its env', async () => {
    process.env.MEDIAGEN_TEST_SECRET = 'hunter2';
    try {
      const dir = await dirs.make();
      await writeFile(join(dir, 'env.py'), 'import json, os\nprint(json.dumps({"type": "ready"}), flush=True)\nimport sys\nsys.stderr.write(json.dumps(sorted(os.environ)) + "\\n")\nsys.stdin.read()\n');
      const e = engine({ argv: ['python3', join(dir, 'env.py')], env: { MODEL_PATH: '/m' } });
      e.start();
      // Up to 30 s: a Python start takes seconds on a loaded machine.
      for (let i = 0; i < 1000 && !log.lines.some((l) => l.obj.stderr); i++) await new Promise((r) => setTimeout(r, 30));
      const names = JSON.parse(log.lines.find((l) => l.obj.stderr)!.obj.stderr as string) as string[];
      expect(names).toContain('MODEL_PATH');
      expect(names).toContain('PATH');
      expect(names).toContain('PYTHONUNBUFFERED');
      expect(names).toContain('MEDIAGEN_PROCESS_INDEX');
      expect(names).not.toContain('MEDIAGEN_TEST_SECRET');
    } finally {
      delete process.env.MEDIAGEN_TEST_SECRET;
    }
  });
});

async function tinyPng(): Promise<Buffer> {
  const sharp = (await import('sharp')).default;
  return sharp({ create: { width: 3, height: 2, channels: 3, background: '#336699' } }).png().toBuffer();
}
