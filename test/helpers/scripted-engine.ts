import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';

export interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves when `signal` aborts, with its reason as a rejection. */
const aborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/**
 * A stand-in engine for lifecycle tests: writes small real files through the same stages as the
 * local engine, and can be held in `sampling` until the test releases it (or the run is aborted).
 */
export class ScriptedEngine implements Engine {
  readonly name = 'scripted';
  /** While set, every run waits in `sampling` for it. */
  hold: Deferred | undefined;
  /** Makes the run throw this once it is sampling. */
  failWith: Error | undefined;
  readonly started: string[] = [];
  readonly sampling: string[] = [];
  readonly aborted: string[] = [];
  readonly finished: string[] = [];

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    this.started.push(job.id);
    try {
      await ctx.stage('processing');
      await ctx.stage('sampling');
      this.sampling.push(job.id);
      if (this.failWith) throw this.failWith;
      if (this.hold) await Promise.race([this.hold.promise, aborted(ctx.signal)]);
      await writeFile(join(ctx.outDir, 'preview.jpg'), Buffer.from(`preview of ${job.id}`));
      await ctx.stage('intermediate-complete', { name: 'preview.jpg', contentType: 'image/jpeg' });
      await writeFile(join(ctx.outDir, 'output.png'), Buffer.from(`output of ${job.id}`));
      this.finished.push(job.id);
      return [{ name: 'output.png', contentType: 'image/png' }];
    } catch (err) {
      if (ctx.signal.aborted) this.aborted.push(job.id);
      throw err;
    }
  }
}

/** Polls until `check` returns a value (real time: the worker runs on real I/O). */
export async function waitFor<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
