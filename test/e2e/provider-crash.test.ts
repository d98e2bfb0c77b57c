import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKrea } from '../providers/fakes/fake-krea.js';
import type { FakeKrea } from '../providers/fakes/fake-krea.js';
import { api, cleanup, startServer, tempDir } from './binary.js';

const MODEL = 'image/vendor-b/model-b-1';

type Job = { status: string; result?: { urls: string[] }; error?: unknown };

async function until(base: string, token: string, id: string, ok: (j: Job) => boolean, timeoutMs = 60_000): Promise<Job> {
  let last: Job | undefined;
  for (const end = Date.now() + timeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    last = (await api(base, `/jobs/${id}`, token)).body as unknown as Job;
    if (ok(last)) return last;
  }
  throw new Error(`job ${id} did not get there; last seen ${JSON.stringify(last)}`);
}

/**
 * A process running a provider-bound job is SIGKILLed (docs/providers.md, "Exactly once, across
 * crashes"): the next process resumes the provider's job it stored, never submitting it again, and
 * the job is billed once.
 */
describe('a provider-bound job across a killed process (compiled binary)', { timeout: 90_000 }, () => {
  let krea: FakeKrea;
  beforeAll(async () => {
    krea = await startFakeKrea();
  });
  afterAll(() => krea?.close());
  afterEach(cleanup);

  it('resumes the stored provider job after SIGKILL, one submission, billed once', async () => {
    const dir = tempDir();
    const config = join(dir, 'mediagen.json');
    writeFileSync(config, JSON.stringify({ providers: { up: { type: 'krea', base_url: krea.url, api_key_env: 'UP_TOKEN', poll_interval_ms: 100 } }, model_engines: { [MODEL]: 'provider:up' } }));
    const args = ['--port', '0', '--data-dir', dir, '--config', config, '--lease-ms', '1500', '--poll-interval-ms', '100'];
    const env = { UP_TOKEN: krea.token };
    krea.statuses = ['processing'];
    const first = await startServer(args, { env });
    const [, token] = await first.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    const before = krea.submissions;
    const created = await api(first.url, `/generate/${MODEL}`, token!, { method: 'POST', body: { prompt: 'a lighthouse' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.job_id as string;
    await until(first.url, token!, id, (j) => j.status === 'sampling');
    first.child.kill('SIGKILL');
    expect((await first.exited()).signal).toBe('SIGKILL');

    krea.statuses = ['completed'];
    const second = await startServer(args, { env });
    const job = await until(second.url, token!, id, (j) => ['completed', 'failed'].includes(j.status));
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(krea.submissions - before).toBe(1);
    const usage = (await api(second.url, '/usage', token!)).body as { items: { job_id: string }[] };
    expect(usage.items.filter((i) => i.job_id === id)).toHaveLength(1);
    await second.stop();
  });
});
