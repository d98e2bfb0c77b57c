import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/engines/local/local-engine.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/scripted-engine.js';

/**
 * The worker's connect-time address guard, through a job, with --allow-private-urls off in the
 * worker. Without the flag the API refuses these literal URLs at the door already
 * (test/security/door-checks.test.ts); the worker's guard is what still stops them when the API
 * process was started with the flag and the worker process without (`--role api` / `--role
 * worker`), and what stops host names that resolve to such addresses.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ allowPrivateUrls: true, worker: { engine: new LocalEngine({ clock: systemClock, latencyMs: 0 }), allowPrivateUrls: false } });
});
afterAll(async () => t.close());

async function failure(imageUrl: string) {
  const res = await generate(t, 'image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', image_url: imageUrl });
  expect(res.statusCode, res.body).toBe(200);
  const { job_id } = res.json() as { job_id: string };
  return waitFor(async () => {
    const j = (await get(t, `/jobs/${job_id}`)).json() as { status: string; error?: { code: string; message: string } };
    return j.status === 'failed' ? j.error : undefined;
  }, 'the job to fail');
}

describe('input URLs pointing inside the network fail the job', () => {
  it.each([
    ['http://127.0.0.1:9/x.png', /loopback/],
    ['http://localhost:9/x.png', /loopback/],
    ['http://169.254.169.254/latest/meta-data/', /cloud metadata/],
    ['http://10.0.0.7/x.png', /private/],
    ['http://[::1]:9/x.png', /loopback/],
    ['http://0x7f.1/x.png', /loopback/],
  ])('%s', async (url, why) => {
    const error = await failure(url);
    expect(error).toEqual({ code: 'input_fetch_failed', message: expect.stringMatching(/^image_url: refused/) });
    expect(error!.message).toMatch(why);
  });
});
