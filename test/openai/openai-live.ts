import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import type { Backend } from '../helpers/backends.js';
import { freePort } from '../helpers/free-port.js';

/** The config's `openai` section the tests run with: an alias of each schema, and a default. */
export const OPENAI_SECTION = {
  models: { 'gpt-image-1': 'image/vendor-a/model-a-2/medium', 'wide-image': 'image/vendor-b/model-b-1' },
  default_image_model: 'gpt-image-1',
  wait_seconds: 60,
};

export interface LiveServer {
  readonly t: TestApp;
  /** `http://127.0.0.1:<port>`: the server's public URL too, so output URLs are fetchable. */
  readonly url: string;
}

/**
 * A real server listening on loopback, with the runtime's own local engine running jobs in this
 * process on the real clock, as `mediagen serve` runs them. `sandbox` lets a prompt's marker fail
 * a job on purpose (docs/sandbox.md), at the price of holding every status 1.1 s: only the tests
 * of a failed job ask for it. `worker: false` runs no jobs: they stay queued.
 */
export async function startLive(
  backend: Backend,
  opts: { balanceMicros?: number; limits?: { maxConcurrentJobs: number; maxBackloggedJobs: number }; allowPrivateUrls?: boolean; sandbox?: boolean; worker?: boolean } = {},
): Promise<LiveServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t = await createTestApp({
    backend,
    realClock: true,
    sandbox: opts.sandbox ?? false,
    publicUrl: url,
    engineLatencyMs: 0,
    openai: OPENAI_SECTION,
    ...(opts.worker === false ? {} : { worker: { concurrency: 2, pollMs: 200, allowPrivateUrls: opts.allowPrivateUrls ?? false } }),
    allowPrivateUrls: opts.allowPrivateUrls ?? false,
    ...(opts.balanceMicros !== undefined ? { balanceMicros: opts.balanceMicros } : {}),
    ...(opts.limits ? { limits: opts.limits } : {}),
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, url };
}

/** A native API call with the same token, as a client of the native door makes it. */
export async function native(server: LiveServer, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.t.token}` } });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}
