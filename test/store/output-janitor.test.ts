import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import type { ClaimedJob } from '../../src/services/jobs/job-runs.js';
import { OutputJanitor } from '../../src/services/upkeep/output-janitor.js';
import { newOutputKey } from '../../src/outputs/output-store.js';
import { createTestApp, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';

const GRACE_MS = 60_000;
const MODEL = 'image/vendor-b/model-b-1';

/** Records what the janitor logs, to check it never names a path (which would carry a key). */
function recordingLog() {
  const lines: { level: string; obj: object; msg: string }[] = [];
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, obj, msg });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

describe.each(backends)('output janitor: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  /** File times are real, so the janitor's clock starts at the real time and moves by hand. */
  const setup = async () => {
    t = await createTestApp({ backend });
    const clock = new ManualClock(Date.now());
    const log = recordingLog();
    const janitor = new OutputJanitor(t.store.jobs, t.outputs, clock, log, { intervalMs: 60_000, graceMs: GRACE_MS, batchSize: 2 });
    return { clock, log, janitor };
  };
  const claimJob = async (): Promise<ClaimedJob> => {
    expect((await generate(t, MODEL, { prompt: 'a fox' })).statusCode).toBe(200);
    return (await t.services.runs.claim())!;
  };
  /** A directory with a file in it, last changed `ageMs` ago in real time. */
  const plant = async (key: string, ageMs: number) => {
    const dir = await t.outputs.reset(key);
    writeFileSync(join(dir, 'output.png'), 'x');
    const then = (Date.now() - ageMs) / 1000;
    utimesSync(dir, then, then);
    return dir;
  };
  const OLD = 2 * GRACE_MS;

  it('removes old orphans, trash and failed jobs\' files; keeps live and completed jobs\' files and anything inside the grace period', async () => {
    const { clock, janitor, log } = await setup();
    const orphans = [newOutputKey(), newOutputKey(), newOutputKey()];
    for (const k of orphans) await plant(k, OLD);
    const trashKey = newOutputKey();
    await plant(trashKey, OLD);
    const trash = (await t.outputs.retire(trashKey))!;
    const fresh = newOutputKey();
    await plant(fresh, 0);
    const running = await claimJob();
    await plant(running.outputKey, OLD);
    const done = await claimJob();
    await plant(done.outputKey, OLD);
    await t.services.runs.advance(done, 'scheduled', 'processing');
    await t.services.runs.advance(done, 'processing', 'sampling');
    expect(await t.services.runs.complete(done, 'sampling', { urls: [] })).toMatchObject({ kind: 'ended' });
    const failed = await claimJob();
    await plant(failed.outputKey, OLD);
    expect(await t.services.runs.fail(failed, { code: 'engine_failed', message: 'x' })).toMatchObject({ kind: 'ended' });
    // A queued job holds no key yet: nothing of it is on disk.
    expect((await generate(t, MODEL, { prompt: 'later' })).statusCode).toBe(200);

    // batchSize 2: six old key directories take three store queries.
    expect(await janitor.sweep()).toEqual({ scanned: 8, trash: 1, orphans: 4, young: 1, failed: 0 });
    expect(readdirSync(t.outputs.root).sort()).toEqual([fresh, running.outputKey, done.outputKey].sort());
    expect(existsSync(join(t.outputs.root, trash))).toBe(false);
    expect(log.lines.filter((l) => l.level !== 'info')).toEqual([]);

    // The fresh orphan goes once it is older than the grace period; live jobs' files never do.
    // (It was made a little after the clock started, hence the margin.)
    clock.advance(GRACE_MS + 5000);
    expect(await janitor.sweep()).toMatchObject({ orphans: 1, young: 0 });
    expect(readdirSync(t.outputs.root).sort()).toEqual([running.outputKey, done.outputKey].sort());
    expect(await janitor.sweep()).toEqual({ scanned: 2, trash: 0, orphans: 0, young: 0, failed: 0 });
  });

  it("removes a deleted job's directory that its worker's late write brought back", async () => {
    const { janitor } = await setup();
    const job = await claimJob();
    const res = await t.app.inject({ method: 'DELETE', url: `/jobs/${job.id}`, headers: { authorization: `Bearer ${t.token}` } });
    expect(res.statusCode).toBe(200);
    // The worker, not yet aborted, empties (recreates) its directory and writes into it.
    await plant(job.outputKey, OLD);
    expect((await t.app.inject({ method: 'GET', url: `/outputs/${job.outputKey}/output.png` })).statusCode).toBe(404);
    expect(await janitor.sweep()).toMatchObject({ orphans: 1 });
    expect(existsSync(t.outputs.dir(job.outputKey))).toBe(false);
  });

  it('counts and logs a removal that fails, without the path, and tries again on the next sweep', async () => {
    const { janitor, log } = await setup();
    const key = newOutputKey();
    await plant(key, OLD);
    const trash = (await t.outputs.retire(key))!;
    const real = t.outputs.removeEntry.bind(t.outputs);
    let refuse = true;
    t.outputs.removeEntry = async (entry) => {
      if (refuse) throw Object.assign(new Error(`ENOTEMPTY: directory not empty, rmdir '${join(t.outputs.root, entry.name)}'`), { code: 'ENOTEMPTY', syscall: 'rmdir' });
      return real(entry);
    };
    expect(await janitor.sweep()).toMatchObject({ trash: 0, failed: 1 });
    expect(log.lines).toEqual([{ level: 'warn', obj: { kind: 'trash', err: { code: 'ENOTEMPTY', syscall: 'rmdir' } }, msg: expect.any(String) }]);
    expect(JSON.stringify(log.lines)).not.toContain(key);
    refuse = false;
    expect(await janitor.sweep()).toMatchObject({ trash: 1, failed: 0 });
    expect(existsSync(join(t.outputs.root, trash))).toBe(false);
  });

  it('sweeps at start and then every interval of its clock, until stopped', async () => {
    const { clock, janitor } = await setup();
    const first = newOutputKey();
    await plant(first, OLD);
    janitor.start();
    // Once the first sweep is over and the janitor sleeps on its clock: planted during the sweep,
    // `second` could be seen by it, and a clock moved before the sleep began would be missed.
    await waitUntil(() => !existsSync(t.outputs.dir(first)) && clock.sleepers === 1);
    const second = newOutputKey();
    await plant(second, OLD);
    // Not before the interval has passed on the clock.
    await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(t.outputs.dir(second))).toBe(true);
    clock.advance(60_000);
    await waitUntil(() => !existsSync(t.outputs.dir(second)));
    await janitor.stop();
    const third = newOutputKey();
    await plant(third, OLD);
    clock.advance(60_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(t.outputs.dir(third))).toBe(true);
    expect(clock.sleepers).toBe(0);
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
