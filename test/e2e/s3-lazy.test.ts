import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { RUN_TIMEOUT_MS, childEnv, cleanup, tempDir } from './binary.js';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

/**
 * Builds the compiled runtime in a fresh process with `env` and says whether the AWS SDK got
 * loaded. The SDK is CommonJS, so every module of it lands in the CommonJS cache when imported.
 */
async function loadsSdk(env: Record<string, string>): Promise<boolean> {
  const script = `
    import { createRequire } from 'node:module';
    const { loadConfig } = await import(${JSON.stringify(`${DIST}config/config.js`)});
    const { createRuntime } = await import(${JSON.stringify(`${DIST}app/runtime.js`)});
    const runtime = await createRuntime(loadConfig({ env: process.env }));
    await runtime.close();
    const cache = createRequire(import.meta.url).cache;
    console.log(JSON.stringify(Object.keys(cache).some((p) => p.includes('@aws-sdk'))));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: childEnv(env), timeout: RUN_TIMEOUT_MS });
  return JSON.parse(stdout.trim()) as boolean;
}

describe('the S3 SDK is loaded only for an s3:// output store (compiled runtime)', { timeout: 60_000 }, () => {
  afterEach(() => cleanup());

  it('stays unloaded on the disk store (admin and disk servers start without it), and loads for s3', async () => {
    expect(await loadsSdk({ MEDIAGEN_DATA_DIR: tempDir() })).toBe(false);
    // The same check sees it when it is there: nothing is contacted, building the store is enough.
    expect(await loadsSdk({ MEDIAGEN_DATA_DIR: tempDir(), MEDIAGEN_OUTPUT_STORE: 's3://some-bucket/p', MEDIAGEN_S3_ENDPOINT: 'http://127.0.0.1:9' })).toBe(true);
  });
});
