import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import type { Engine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import type { DiskOutputStore } from '../../src/outputs/disk/disk-output-store.js';
import type { RunOutputs } from '../../src/worker/run-job.js';
import { Worker } from '../../src/worker/worker.js';
import { PUBLIC_URL, createJob, createTestApp, del, errorOf, generate, get, jobWhenEnded } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { CapturingLog, errnoError } from '../helpers/faults.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { colourDataUri } from '../helpers/style-engine.js';
import { waitFor } from '../helpers/scripted-engine.js';

/** Review 15 items 1.5 and 1.6: a style comes only from the training model's run, and a completed run never removes its outputs. */

const TRAIN = 'loraTraining';
const B1 = 'image/vendor-b/model-b-1';

type JobJson = { job_id: string; status: string; result?: { urls?: string[]; style_id?: string } | null; error?: { code: string; message: string } | null };

const png = (path: string) => sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 20, g: 90, b: 200 } } }).png().toFile(path);

/**
 * Every run writes a preview, then its main PNG; `styleFile` says whether it also reports a
 * `role: 'style'` file, whatever the model.
 */
class StyleFileEngine implements Engine {
  readonly name = 'style-file';
  styleFile = true;

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    await ctx.stage('processing');
    await ctx.stage('sampling');
    await png(join(ctx.outDir, 'preview.png'));
    await ctx.stage('intermediate-complete', { name: 'preview.png', contentType: 'image/png' });
    const main = job.model === TRAIN ? 'cover.png' : 'output.png';
    await png(join(ctx.outDir, main));
    const files: OutputFile[] = [{ name: main, contentType: 'image/png' }];
    if (this.styleFile) {
      await writeFile(join(ctx.outDir, 'style.json'), JSON.stringify({ mean: [20, 90, 200] }));
      files.push({ name: 'style.json', contentType: 'application/json', role: 'style' });
    }
    return files;
  }
}

/** The disk store, with a hook run in place of removing one file. */
class HookedOutputs implements RunOutputs {
  onRemoveFile: ((key: string, name: string) => Promise<void>) | undefined;
  constructor(private readonly inner: DiskOutputStore) {}
  scratch(key: string) {
    return this.inner.scratch(key);
  }
  put(key: string, name: string, fromPath: string) {
    return this.inner.put(key, name, fromPath);
  }
  remove(key: string) {
    return this.inner.remove(key);
  }
  removeFile(key: string, name: string) {
    return this.onRemoveFile ? this.onRemoveFile(key, name) : this.inner.removeFile(key, name);
  }
  url(key: string, name: string) {
    return this.inner.url(key, name);
  }
}

describe.each(backends)('where a style may come from, and what a completed run keeps, on $name', (backend) => {
  let t: TestApp;
  let worker: Worker | undefined;
  afterEach(async () => {
    await worker?.stop(0);
    worker = undefined;
    await t.close();
  });

  async function start(engine: Engine) {
    t = await createTestApp({ backend });
    const outputs = new HookedOutputs(t.outputs);
    const log = new CapturingLog();
    worker = new Worker(
      { ...t.services, outputs, engine, loadInput: () => Promise.reject(new Error('no inputs here')), loadStyle: () => Promise.reject(new Error('no styles here')), log },
      { concurrency: 1, pollMs: 50 },
    );
    worker.start();
    return { outputs, log };
  }

  const trainJob = async () => (await createJob(t, TRAIN, { name: 'Blue', urls: [await colourDataUri(20, 90, 200)] })).json<JobJson>().job_id;
  const styleCount = async () => (await get(t, '/styles')).json<{ items: unknown[] }>().items.length;

  it("fails a training run that reports no style file with engine_failed, uncharged and with no style", async () => {
    const engine = new StyleFileEngine();
    engine.styleFile = false;
    await start(engine);
    const id = await trainJob();
    const job = await jobWhenEnded<JobJson>(t, id);
    expect(job.status).toBe('failed');
    expect(job.error?.code).toBe('engine_failed');
    expect(await styleCount()).toBe(0);
    const kinds = (await t.store.billing.listEntries(t.workspaceId)).filter((e) => e.jobId === id).map((e) => e.kind);
    expect(kinds.sort()).toEqual(['hold', 'release']);
    await expectLedgerConsistent(t.store, t.workspaceId);
  });

  it("fails another model's run that reports a style file with engine_failed, and makes no style of it", async () => {
    await start(new StyleFileEngine());
    const id = (await generate(t, B1, { prompt: 'a lighthouse' })).json<JobJson>().job_id;
    const job = await jobWhenEnded<JobJson>(t, id);
    expect(job.status).toBe('failed');
    expect(job.error?.code).toBe('engine_failed');
    expect(await styleCount()).toBe(0);
    // The training model's run with its style file still completes.
    const trained = await jobWhenEnded<JobJson>(t, await trainJob());
    expect(trained.status).toBe('completed');
    expect(await styleCount()).toBe(1);
  });

  it("keeps a completed training job's outputs when a fault follows the completion and the job is deleted meanwhile: the style's cover stays served", async () => {
    const { outputs, log } = await start(new StyleFileEngine());
    let deleted: number | undefined;
    // After the completion commits, the run removes its preview: here the client deletes the job
    // (DELETE answers before the run goes on), then the disk fails.
    outputs.onRemoveFile = async (key, name) => {
      const [job] = (await get(t, '/jobs')).json<{ items: JobJson[] }>().items;
      deleted = (await del(t, `/jobs/${job!.job_id}`)).statusCode;
      throw errnoError('EROFS', 'unlink', join(t.dir, 'outputs', key, name));
    };
    const id = await trainJob();
    // The run's last word on the job, whatever it is, follows the removal that failed.
    const last = () => log.lines.filter((l) => l.obj.jobId === id && l.msg !== 'job completed');
    await waitFor(async () => deleted !== undefined && last().length > 0, 'the run to end');
    await new Promise((r) => setTimeout(r, 100));
    expect(deleted).toBe(200);
    errorOf(await get(t, `/jobs/${id}`), 404);
    const [style] = (await get(t, '/styles')).json<{ items: { cover_url: string }[] }>().items;
    const cover = await t.app.inject({ method: 'GET', url: style!.cover_url.replace(PUBLIC_URL, '') });
    expect(cover.statusCode).toBe(200);
    expect((await sharp(cover.rawPayload).metadata()).format).toBe('png');
    expect(last().map((l) => [l.level, l.msg])).toEqual([['warn', 'could not tidy up after a completed job']]);
  });
});
