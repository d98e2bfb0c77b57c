import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Engine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { OutputJanitor } from '../../src/services/upkeep/output-janitor.js';
import { createTestApp, del, errorOf, generate, get, silentLog } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { deferred, waitFor } from '../helpers/scripted-engine.js';
import type { Deferred } from '../helpers/scripted-engine.js';
import { plantUnremovable, releaseUnremovable } from '../helpers/unremovable.js';

const MODEL = 'image/vendor-b/model-b-1';
const ITERATIONS = 30;
/** A loop that has not finished by then has a bug, not a slow machine. */
const LOOP_BUDGET_MS = 60_000;

/**
 * An engine that behaves like a render writing frames: after its preview it keeps adding files to
 * its directory until it is aborted, and, like a child process that has not died yet, goes on
 * writing for a moment after the abort, recreating the directory if it has vanished.
 */
class FrameWriter implements Engine {
  readonly name = 'frame-writer';
  readonly keys = new Map<string, string>();
  readonly ended = new Set<string>();
  /** Jobs that wait here (after their preview) until released, then complete. */
  readonly holds = new Map<string, Deferred>();
  holdEvery = false;

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    const { outDir, signal } = ctx;
    // The disk store's scratch directory sits inside the key's directory.
    this.keys.set(job.id, basename(dirname(outDir)));
    try {
      await ctx.stage('processing');
      await ctx.stage('sampling');
      await writeFile(join(outDir, 'preview.jpg'), `preview of ${job.id}`);
      await ctx.stage('intermediate-complete', { name: 'preview.jpg', contentType: 'image/jpeg' });
      if (this.holdEvery) {
        const hold = deferred();
        this.holds.set(job.id, hold);
        await Promise.race([hold.promise, new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))]);
      } else {
        for (let i = 0; !signal.aborted && i < 5000; i++) {
          await writeFile(join(outDir, `frame-${i}.png`), `frame ${i}`).catch(() => undefined);
          await sleep(1);
        }
      }
      if (signal.aborted) {
        for (let i = 0; i < 5; i++) {
          await mkdir(outDir, { recursive: true }).catch(() => undefined);
          await writeFile(join(outDir, `late-${i}.png`), 'late').catch(() => undefined);
        }
      }
      signal.throwIfAborted();
      await writeFile(join(outDir, 'output.png'), `output of ${job.id}`);
      return [{ name: 'output.png', contentType: 'image/png' }];
    } finally {
      this.ended.add(job.id);
    }
  }
}

describe.each(backends)('DELETE racing a running job: $name', (backend) => {
  let t: TestApp;
  let engine: FrameWriter;
  afterEach(async () => {
    for (const hold of engine?.holds.values() ?? []) hold.resolve();
    if (t) releaseUnremovable(t.dir);
    await t?.close();
  });

  const start = async () => {
    engine = new FrameWriter();
    t = await createTestApp({ backend, worker: { engine, concurrency: 2 } });
    // The janitor reads file times, which are real: it gets the system clock and no grace period.
    const janitor = new OutputJanitor(t.store.jobs, t.outputs, systemClock, silentLog, { intervalMs: 60_000, graceMs: 0 });
    return { janitor };
  };
  const create = async () => {
    const res = await generate(t, MODEL, { prompt: 'a fox' });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { job_id: string }).job_id;
  };
  const view = async (id: string) => (await get(t, `/jobs/${id}`)).json() as Json & { status: string; result: { urls: string[] } | null };
  const fetchOutput = (key: string, name: string) => t.app.inject({ method: 'GET', url: `/outputs/${key}/${name}` });
  /** Every file name in the key's directory or its trash, whichever exists, scratch included. */
  const filesOf = (key: string) =>
    readdirSync(t.outputs.root)
      .filter((d) => d === key || d.startsWith(`.trash-${key}-`))
      .flatMap((d) => readdirSync(join(t.outputs.root, d), { recursive: true, encoding: 'utf8' }).map((f) => basename(f)));
  const ledgerOf = async (jobId: string) =>
    (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === jobId).map((e) => e.kind).sort();

  it(`never answers 500, bills nothing and serves nothing of a job deleted while it writes (${ITERATIONS} times)`, async () => {
    const { janitor } = await start();
    const deadline = Date.now() + LOOP_BUDGET_MS;
    const deleted: string[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      expect(Date.now(), `iteration ${i} within the time budget`).toBeLessThan(deadline);
      const id = await create();
      // Three moments: before or around the claim, while frames are written, and a few frames later.
      if (i % 3 !== 0) {
        const running = await waitFor(async () => {
          const v = await view(id);
          return v.status === 'intermediate-complete' && v;
        }, `job ${id} to write its frames`);
        const key = engine.keys.get(id)!;
        expect((await t.app.inject({ method: 'GET', url: new URL(running.result!.urls[0]!).pathname })).statusCode).toBe(200);
        if (i % 3 === 2) await waitFor(async () => filesOf(key).length > 5, 'a few frames');
      }
      const res = await del(t, `/jobs/${id}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ job_id: id, deleted: true });
      expect(errorOf(await get(t, `/jobs/${id}`), 404)).toMatch(/not found/);
      deleted.push(id);
      const key = engine.keys.get(id);
      if (key) {
        for (const name of ['preview.jpg', 'frame-0.png', 'late-0.png', 'output.png']) {
          expect((await fetchOutput(key, name)).statusCode, name).toBe(404);
        }
      }
    }
    // Every run has ended, late writes included: still nothing served, nothing billed.
    await waitFor(async () => t.worker!.running === 0 && deleted.every((id) => !engine.keys.has(id) || engine.ended.has(id)), 'every run to end');
    for (const id of deleted) {
      expect(await ledgerOf(id), id).toEqual(['hold', 'release']);
      const key = engine.keys.get(id);
      if (!key) continue;
      for (const name of ['preview.jpg', 'frame-0.png', 'late-0.png', 'late-4.png']) expect((await fetchOutput(key, name)).statusCode).toBe(404);
    }
    expect(await expectLedgerConsistent(t.store, t.workspaceId)).toMatchObject({ held: 0 });
    // Whatever removals left (or late writers brought back), one sweep takes away.
    await janitor.sweep();
    expect(readdirSync(t.outputs.root)).toEqual([]);
  });

  it('a DELETE racing a completion either deletes the completed job (charged once) or cancels it (released), never both, and serves nothing after', async () => {
    const { janitor } = await start();
    engine.holdEvery = true;
    for (let i = 0; i < 20; i++) {
      const id = await create();
      await waitFor(async () => engine.holds.has(id), `job ${id} to wait after its preview`);
      const key = engine.keys.get(id)!;
      // Release the engine and DELETE at once; a few microtask turns apart in either order.
      const [res] = await Promise.all([del(t, `/jobs/${id}`), (async () => {
        for (let k = 0; k < i % 4; k++) await Promise.resolve();
        engine.holds.get(id)!.resolve();
      })()]);
      expect(res.statusCode, res.body).toBe(200);
      await waitFor(async () => engine.ended.has(id), `run of ${id} to end`);
      const entries = await ledgerOf(id);
      expect([['charge', 'hold'], ['hold', 'release']]).toContainEqual(entries);
      for (const name of ['preview.jpg', 'output.png']) expect((await fetchOutput(key, name)).statusCode, name).toBe(404);
      expect(errorOf(await get(t, `/jobs/${id}`), 404)).toMatch(/not found/);
    }
    await waitFor(async () => t.worker!.running === 0, 'every run to end');
    await expectLedgerConsistent(t.store, t.workspaceId);
    await janitor.sweep();
    expect(readdirSync(t.outputs.root)).toEqual([]);
  });

  it('answers 200 and logs (without the path) when removing the files fails (ENOTEMPTY); serves none of them; the janitor removes them later', async () => {
    const { janitor } = await start();
    engine.holdEvery = true;
    const completedJob = async () => {
      const id = await create();
      await waitFor(async () => engine.holds.has(id), 'the job to wait after its preview');
      engine.holds.get(id)!.resolve();
      const done = await waitFor(async () => {
        const v = await view(id);
        return v.status === 'completed' && v;
      }, 'the job to complete');
      const path = new URL(done.result!.urls[0]!).pathname;
      expect((await t.app.inject({ method: 'GET', url: path })).statusCode).toBe(200);
      return { id, key: engine.keys.get(id)!, path };
    };
    const viaHttp = await completedJob();
    const viaService = await completedJob();
    // What a worker still writing does to `rm -r`: the directory is renamed, then deleting it fails.
    const outputs = t.outputs;
    outputs.remove = async (k: string) => {
      await outputs.retire(k);
      throw Object.assign(new Error('ENOTEMPTY: directory not empty'), { code: 'ENOTEMPTY', syscall: 'rmdir' });
    };
    const res = await del(t, `/jobs/${viaHttp.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ job_id: viaHttp.id, deleted: true });
    const warnings: { obj: object; msg: string }[] = [];
    const auth = await t.services.identity.authenticate(`Bearer ${t.token}`);
    expect(await t.services.jobs.delete(auth, viaService.id, { warn: (obj, msg) => void warnings.push({ obj, msg }) })).toEqual({
      job_id: viaService.id,
      deleted: true,
    });
    // Logged with the job id, the request that created it, and the cause, never the path (which holds the key).
    expect(warnings).toEqual([
      { obj: { jobId: viaService.id, jobRequestId: expect.any(String), err: { code: 'ENOTEMPTY', syscall: 'rmdir' } }, msg: expect.stringMatching(/janitor/) },
    ]);
    expect(JSON.stringify(warnings)).not.toContain(viaService.key);
    for (const job of [viaHttp, viaService]) {
      expect(errorOf(await get(t, `/jobs/${job.id}`), 404)).toMatch(/not found/);
      expect((await t.app.inject({ method: 'GET', url: job.path })).statusCode).toBe(404);
      expect(await ledgerOf(job.id)).toEqual(['charge', 'hold']);
      expect(filesOf(job.key)).toContain('output.png');
    }
    await janitor.sweep();
    expect(readdirSync(t.outputs.root)).toEqual([]);
  });

  it('answers 200 when the directory cannot be deleted at all, and the janitor removes it once it can', async () => {
    const { janitor } = await start();
    engine.holdEvery = true;
    const id = await create();
    await waitFor(async () => engine.holds.has(id), 'the job to wait after its preview');
    const key = engine.keys.get(id)!;
    if (!plantUnremovable(t.outputs.dir(key))) return; // neither chattr nor permissions can stop a deletion here
    const res = await del(t, `/jobs/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    await waitFor(async () => engine.ended.has(id) && t.worker!.running === 0, 'the run to end');
    expect((await fetchOutput(key, 'preview.jpg')).statusCode).toBe(404);
    expect(await ledgerOf(id)).toEqual(['hold', 'release']);
    // Left in the trash, out of every URL's reach; the janitor fails too while the cause remains.
    expect(readdirSync(t.outputs.root)).toEqual([expect.stringMatching(new RegExp(`^\\.trash-${key}-`))]);
    expect(await janitor.sweep()).toMatchObject({ failed: 1 });
    releaseUnremovable(t.dir);
    expect(await janitor.sweep()).toMatchObject({ trash: 1, failed: 0 });
    expect(readdirSync(t.outputs.root)).toEqual([]);
    expect(existsSync(t.outputs.dir(key))).toBe(false);
  });
});
