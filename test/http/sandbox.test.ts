import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { isTerminal } from '../../src/domain/states.js';
import type { EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import { sandboxFailure } from '../../src/engines/sandbox-engine.js';
import { createGuardedDispatcher } from '../../src/lib/safe-fetch.js';
import type { JobRecord } from '../../src/store/store.js';
import { clientJobError } from '../../src/worker/job-errors.js';
import { WebhookSender } from '../../src/worker/webhook-sender.js';
import { PUBLIC_URL, createTestApp, errorOf, generate, get, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { IMAGE_THEN_VIDEO, executed, publishGraph } from '../helpers/node-apps.js';
import { Receiver } from '../helpers/receiver.js';
import { ScriptedEngine, waitFor } from '../helpers/scripted-engine.js';

const MODEL = 'image/vendor-b/model-b-1';
const WITH_INPUT = 'image/vendor-a/model-a-2/medium';
type JobView = Json & { job_id: string; status: string; error?: Json; created_at: string; completed_at?: string };

/** The scripted engine, remembering the prompt each run was given. */
class PromptRecorder extends ScriptedEngine {
  readonly prompts: string[] = [];
  override run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    this.prompts.push(String(job.request.prompt));
    return super.run(job, ctx);
  }
}

let t: TestApp;
let engine: PromptRecorder;
/** Each status write of the runner, at the time it was written (microseconds of the test's clock). */
let writes: { id: string; status: string; at: number }[];
let receiver: Receiver | undefined;
let dispatcher: Dispatcher | undefined;

async function start(sandbox: boolean) {
  engine = new PromptRecorder();
  // A long lease: the test's clock runs ahead of the heartbeat's writes.
  t = await createTestApp({ sandbox, allowPrivateUrls: true, runPolicy: { leaseMs: 600_000 }, worker: { engine, pollMs: 1000 } });
  writes = [];
  const runs = t.services.runs;
  const note = <T extends JobRecord | undefined>(r: T): T => {
    if (r) writes.push({ id: r.id, status: r.status, at: r.updatedAt });
    return r;
  };
  const [claimMany, advance] = [runs.claimMany.bind(runs), runs.advance.bind(runs)];
  runs.claimMany = async (...a) => (await claimMany(...a)).map(note);
  runs.advance = async (...a) => {
    const moved = await advance(...a);
    if (moved.kind === 'moved') note(moved.job);
    return moved;
  };
}
afterEach(async () => {
  await receiver?.close();
  await dispatcher?.close();
  receiver = dispatcher = undefined;
  await t?.close();
});

async function create(prompt: string, model = MODEL, extra: Json = {}, headers: Record<string, string> = {}): Promise<JobView> {
  const res = await generate(t, model, { prompt, ...extra }, headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const view = async (id: string) => (await get(t, `/jobs/${id}`)).json() as JobView;

/**
 * Moves the test's clock on in 50 ms steps until the job ends, reading the job as a client polling
 * once a second (of that clock) would: the statuses it saw, in order, without repeats.
 */
async function pollToEnd(id: string): Promise<{ job: JobView; seen: string[] }> {
  const seen: string[] = [];
  for (let ms = 0; ms < 600_000; ms += 50) {
    if (ms % 1000 === 0) {
      const job = await view(id);
      if (seen.at(-1) !== job.status) seen.push(job.status);
      if (isTerminal(job.status)) return { job, seen };
    }
    t.clock.advance(50);
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`job ${id} did not end`);
}

/** The job's statuses with the time each began (µs): created, each write of the runner, the end. */
async function timeline(id: string): Promise<[string, number][]> {
  const record = (await t.services.runs.find(id))!;
  return [['queued', record.createdAt], ...writes.filter((w) => w.id === id).map((w): [string, number] => [w.status, w.at]), [record.status, record.completedAt!]];
}
/** How long (ms) each status of a timeline lasted, by status. */
const gaps = (line: [string, number][]) => line.slice(1).map(([, at], i) => [line[i]![0], (at - line[i]![1]) / 1000] as const);

describe('sandbox mode', () => {
  it('holds every status at least 1.1 s, so a client polling once a second sees each one', async () => {
    await start(true);
    const { job_id } = await create('a red fox');
    const { job, seen } = await pollToEnd(job_id);
    expect(job.status).toBe('completed');
    expect(seen).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete', 'completed']);
    const line = await timeline(job_id);
    expect(line.map(([s]) => s)).toEqual(seen);
    for (const [status, ms] of gaps(line)) expect(ms, status).toBeGreaterThanOrEqual(1100);
  });

  it('fail=engine_failed: the job fails as a real engine failure does, its webhook says so, and nothing is charged', async () => {
    await start(true);
    receiver = await new Receiver().start();
    dispatcher = createGuardedDispatcher({ allowPrivate: true });
    const sender = new WebhookSender(
      { webhooks: t.services.webhooks, signals: t.services.signals, clock: t.clock, dispatcher, publicUrl: () => PUBLIC_URL, log: silentLog },
      { concurrency: 1, pollMs: 1000, timeoutMs: 5000 },
    );
    const before = await t.store.billing.getBalance(t.workspaceId);
    const { job_id } = await create('a red fox [mediagen:fail=engine_failed]', MODEL, {}, { 'x-webhook-url': `${receiver.url}/hook` });
    const { job, seen } = await pollToEnd(job_id);
    expect(job).toEqual({ job_id, type: MODEL, status: 'failed', created_at: expect.any(String), completed_at: expect.any(String), error: { code: 'engine_failed', message: 'the engine failed unexpectedly' } });
    // A real engine failure comes while sampling.
    expect(seen).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'failed']);
    expect(engine.started).toEqual([]);
    await sender.sendDue();
    expect(receiver.received.map((r) => [r.path, JSON.parse(r.body) as Json])).toEqual([['/hook', job]]);
    expect(await t.store.billing.getBalance(t.workspaceId)).toEqual(before);
    const entries = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === job_id);
    expect(entries.map((e) => e.kind).sort()).toEqual(['hold', 'release']);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it('fail=input_invalid and fail=input_fetch_failed fail before processing, naming the input field as real input failures do', async () => {
    await start(true);
    const url = 'https://cdn.example.org/in.png';
    const body = { aspect_ratio: '1:1', resolution: '1K', image_url: url };
    const invalid = await create(`a red fox [mediagen:fail=input_invalid]`, WITH_INPUT, body);
    const fetch = await create(`a red fox [mediagen:delay=2000][mediagen:fail=input_fetch_failed]`, WITH_INPUT, body);
    const a = await pollToEnd(invalid.job_id);
    expect(a.job.error).toEqual({ code: 'input_invalid', message: 'image_url is not a usable image: it cannot be decoded' });
    expect(a.seen).toEqual(['queued', 'scheduled', 'failed']);
    const b = await pollToEnd(fetch.job_id);
    expect(b.job.error).toEqual({ code: 'input_fetch_failed', message: 'image_url: HTTP 404 from cdn.example.org' });
    // The delay comes on top of the dwell in `scheduled`.
    const [, scheduled] = gaps(await timeline(fetch.job_id));
    expect(scheduled).toEqual(['scheduled', expect.any(Number)]);
    expect(scheduled![1]).toBeGreaterThanOrEqual(1100 + 2000);
    expect(engine.started).toEqual([]);
    expect((await t.store.billing.getBalance(t.workspaceId)).heldMicros).toBe(0);
  });

  it('timeout: the job fails through the real timeout, given a timeout of 5 s, unbilled', async () => {
    await start(true);
    const before = await t.store.billing.getBalance(t.workspaceId);
    const { job_id } = await create('a red fox [mediagen:timeout]');
    const { job, seen } = await pollToEnd(job_id);
    expect(job.error).toEqual({ code: 'timeout', message: "the job ran longer than its model's timeout of 5 s" });
    expect(seen).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'failed']);
    const record = (await t.services.runs.find(job_id))!;
    expect((record.completedAt! - record.startedAt!) / 1000).toBeGreaterThanOrEqual(5000);
    expect(await t.store.billing.getBalance(t.workspaceId)).toEqual(before);
  });

  it('delay=N: sampling lasts N ms more; the engine renders the prompt without the marker, the job keeps it', async () => {
    await start(true);
    const { job_id } = await create('a red fox [mediagen:delay=3000]');
    const { job } = await pollToEnd(job_id);
    expect(job.status).toBe('completed');
    const sampling = gaps(await timeline(job_id)).find(([s]) => s === 'sampling')!;
    expect(sampling[1]).toBeGreaterThanOrEqual(1100 + 3000);
    expect(engine.prompts).toEqual(['a red fox']);
    expect((await t.services.runs.find(job_id))!.request.prompt).toBe('a red fox [mediagen:delay=3000]');
  });

  it("a node-app job's statuses are held too; markers in its inputs are ordinary text to its steps", async () => {
    await start(true);
    const { versionId } = await publishGraph(t, IMAGE_THEN_VIDEO);
    const job_id = await executed(t, versionId, { prompt: 'a fox [mediagen:fail=engine_failed]', motion: 'pan [mediagen:explode]' });
    const { job, seen } = await pollToEnd(job_id);
    expect(job.status).toBe('completed');
    expect(seen).toEqual(['queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete', 'completed']);
    for (const [status, ms] of gaps(await timeline(job_id))) expect(ms, status).toBeGreaterThanOrEqual(1100);
    expect(engine.prompts).toEqual(['a fox [mediagen:fail=engine_failed]', 'pan [mediagen:explode]']);
  });

  it.each([
    ['a fox [mediagen:fail=card_declined]', 'takes one of input_fetch_failed, input_invalid, input_too_large, engine_failed, worker_lost, server_unavailable'],
    ['a fox [mediagen:delay=60001]', 'the delay must be a whole number of milliseconds from 0 to 60000'],
    ['a fox [mediagen:explode]', 'unknown sandbox marker [mediagen:explode]'],
  ])('refuses %j at creation with 400, creating nothing', async (prompt, message) => {
    await start(true);
    const before = await t.store.billing.getBalance(t.workspaceId);
    expect(errorOf(await generate(t, MODEL, { prompt }), 400)).toContain(message);
    expect((await get(t, '/jobs')).json()).toMatchObject({ items: [] });
    expect(await t.store.billing.getBalance(t.workspaceId)).toEqual(before);
  });

  it("fail=worker_lost shows what the reaper's real worker_lost shows", async () => {
    // No worker: three claims whose worker dies, each reaped once its lease ran out (well within the timeout).
    t = await createTestApp({ runPolicy: { leaseMs: 30_000 } });
    const { job_id } = await create('a red fox');
    for (let i = 0; i < 3; i++) {
      expect(await t.services.runs.claim()).toBeDefined();
      t.clock.advance(30_001);
      await t.services.runs.reap();
    }
    const real = await view(job_id);
    expect(real.status).toBe('failed');
    expect(clientJobError(sandboxFailure('worker_lost', { prompt: 'x' }))).toEqual(real.error);
  });
});

describe('without --sandbox', () => {
  it('markers are ordinary prompt text: no dwell, no failure, no 400, and the engine renders them', async () => {
    await start(false);
    const prompts = ['a fox [mediagen:fail=engine_failed]', 'a fox [mediagen:timeout]', 'a fox [mediagen:fail=card_declined]', 'a fox [mediagen:delay=999999]'];
    const ids = [];
    for (const prompt of prompts) ids.push((await create(prompt)).job_id);
    // The clock never moves: nothing waits on it.
    for (const id of ids) {
      const job = await waitFor(async () => {
        const j = await view(id);
        return isTerminal(j.status) && j;
      }, `job ${id} to end`);
      expect(job.status).toBe('completed');
    }
    expect([...engine.prompts].sort()).toEqual([...prompts].sort());
  });
});
