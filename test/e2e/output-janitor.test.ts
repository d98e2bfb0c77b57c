import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newOutputKey } from '../../src/outputs/output-store.js';
import { RUN_TIMEOUT_MS, cleanup, startServer, tempDir } from './binary.js';

/** An output directory with a file, last changed `ageMs` ago: what a crash or a failed removal leaves. */
function leftover(outputs: string, name: string, ageMs: number): string {
  const dir = join(outputs, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'output.png'), 'left behind');
  const then = (Date.now() - ageMs) / 1000;
  utimesSync(dir, then, then);
  return dir;
}

async function waitUntil(ready: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${RUN_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the output janitor of a serving process (compiled binary)', { timeout: 60_000 }, () => {
  afterEach(() => cleanup());

  it('removes what a crash left in the outputs as the worker starts, and keeps what changed in the last 10 minutes', async () => {
    const dataDir = tempDir();
    const outputs = join(dataDir, 'outputs');
    const orphanKey = newOutputKey();
    const orphan = leftover(outputs, orphanKey, 60 * 60_000);
    const trash = leftover(outputs, `.trash-${newOutputKey()}-0123456789abcdef`, 60 * 60_000);
    const fresh = leftover(outputs, newOutputKey(), 0);
    const server = await startServer(['--port', '0', '--data-dir', dataDir, '--janitor-interval-ms', '1000', '--log-level', 'info']);
    await waitUntil(() => !existsSync(orphan) && !existsSync(trash), 'sweep at start');
    // Two more sweeps (one a second) leave the recent directory alone.
    await new Promise((r) => setTimeout(r, 2500));
    expect(existsSync(fresh)).toBe(true);
    await server.stop();
    expect(server.stderr()).toContain('output janitor swept');
    expect(server.stderr()).not.toContain(orphanKey);
  });

  it('does not run in an api-only process', async () => {
    const dataDir = tempDir();
    const orphan = leftover(join(dataDir, 'outputs'), newOutputKey(), 60 * 60_000);
    const server = await startServer(['--port', '0', '--data-dir', dataDir, '--role', 'api', '--janitor-interval-ms', '1000']);
    await new Promise((r) => setTimeout(r, 1500));
    expect(existsSync(orphan)).toBe(true);
    await server.stop();
  });
});
