import { afterEach, describe, expect, it } from 'vitest';
import { RUN_TIMEOUT_MS, api, cleanup, oneLineError, run, startServer, tempDir } from './binary.js';

const REFUSED = '--sandbox (MEDIAGEN_SANDBOX) is refused with production settings';

describe('mediagen serve --sandbox (compiled binary)', { timeout: 60_000 }, () => {
  afterEach(cleanup);

  it('exits 1 with one line naming the production setting when NODE_ENV is production', async () => {
    const r = await run(['serve', '--sandbox', '--port', '0', '--data-dir', tempDir()], { env: { NODE_ENV: 'production' } });
    expect(oneLineError(r)).toBe(
      `mediagen: ${REFUSED}: NODE_ENV is production; the sandbox makes jobs fail on purpose and is for development and integration servers only (docs/sandbox.md)`,
    );
    expect(r.stdout).toBe('');
  });

  it('exits 1 with MEDIAGEN_SANDBOX and a PostgreSQL database URL, before connecting to it', async () => {
    const r = await run(['serve', '--port', '0', '--database-url', 'postgres://nobody@127.0.0.1:1/none'], { env: { MEDIAGEN_SANDBOX: '1' } });
    expect(oneLineError(r)).toContain(`${REFUSED}: a PostgreSQL database_url is set`);
  });

  it('says it is a sandbox at start, refuses a bad marker with 400 and fails a job on purpose through the local engine', async () => {
    const server = await startServer(['--sandbox', '--port', '0', '--engine-latency-ms', '0', '--data-dir', tempDir()]);
    await server.waitForStdout(/^mediagen: SANDBOX mode: .*docs\/sandbox\.md\)\n/m);
    const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    const path = '/generate/image/vendor-b/model-b-1';
    const bad = await api(server.url, path, token!, { method: 'POST', body: { prompt: 'a fox [mediagen:fail=nope]' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('takes one of input_fetch_failed');
    const created = await api(server.url, path, token!, { method: 'POST', body: { prompt: 'a fox [mediagen:fail=engine_failed]' } });
    expect(created.status).toBe(200);
    const id = created.body.job_id as string;
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    let job = created.body;
    while (job.status !== 'failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      job = (await api(server.url, `/jobs/${id}`, token!)).body;
    }
    expect(job).toMatchObject({ status: 'failed', error: { code: 'engine_failed', message: 'the engine failed unexpectedly' } });
  });
});
