import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';

const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * An engine with zero simulated latency that costs almost nothing: it goes through the local
 * engine's stages (each a guarded status write) and writes a one-pixel preview and output, so what
 * the bench measures is the server's own work per job, not rendering. It also tells the bench when
 * each run starts, which is the claim time the embedded dispatch latency uses.
 */
export class FastEngine implements Engine {
  readonly name = 'bench-fast';
  #onStart: ((jobId: string, at: number) => void) | undefined;

  /** Calls `fn` with the job id and `performance.now()` when each run starts; one listener. */
  onStart(fn: ((jobId: string, at: number) => void) | undefined): void {
    this.#onStart = fn;
  }

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    this.#onStart?.(job.id, performance.now());
    await ctx.stage('processing');
    await ctx.stage('sampling');
    await writeFile(join(ctx.outDir, 'preview.png'), TINY_PNG);
    await ctx.stage('intermediate-complete', { name: 'preview.png', contentType: 'image/png' });
    await writeFile(join(ctx.outDir, 'output.png'), TINY_PNG);
    return [{ name: 'output.png', contentType: 'image/png' }];
  }
}
