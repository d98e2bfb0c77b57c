import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresDatabase, TEST_DATABASE_URL } from '../helpers/backends.js';
import { Receiver } from '../helpers/receiver.js';
import { adminJson, api, cleanup, RUN_TIMEOUT_MS, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';

const B1 = '/generate/image/vendor-b/model-b-1';
/** The line a process with a job runner prints once it runs (the first line of a worker-only one). */
const WORKER_LINE = /^mediagen: running up to \d+ jobs at once/m;
const FAST = ['--engine-latency-ms', '0', '--poll-interval-ms', '200'];

interface Attempt {
  attempt: number;
  attempted_at: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
  next_retry_at: string | null;
}
interface Delivery {
  webhook_id: string;
  event: string;
  url: string;
  state: string;
  created_at: string;
  next_attempt_at: string | null;
  attempts: Attempt[];
}
interface Job {
  job_id: string;
  status: string;
  /** Absent for a job that did not complete. */
  result?: { urls: string[] };
}

async function tokenOf(server: Server): Promise<string> {
  const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  return token!;
}

/** A TCP port nobody listens on right now: one the system handed out, then closed again. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Polls `get` until `done` holds, failing after `timeoutMs` with the last value seen. */
async function waitFor<T>(what: string, get: () => Promise<T> | T, done: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < until) {
    last = await get();
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not happen in ${timeoutMs} ms; last seen ${JSON.stringify(last)}`);
}

/** POSTs a model-b-1 job that asks for a webhook to `hook`; returns its id. */
async function createJob(base: string, token: string, hook: string): Promise<string> {
  const res = await fetch(`${base}${B1}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-webhook-url': hook },
    body: JSON.stringify({ prompt: 'a fox' }),
    signal: AbortSignal.timeout(RUN_TIMEOUT_MS),
  });
  const body = (await res.json()) as { job_id: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.job_id;
}

async function deliveries(base: string, token: string, jobId: string): Promise<Delivery[]> {
  const r = await api(base, `/jobs/${jobId}/webhook-deliveries`, token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body as unknown as { items: Delivery[] }).items;
}

const secretOf = async (dir: string) =>
  (await adminJson<{ secret: string }>(dir, ['webhook-secret', 'show', '--workspace', 'default', '--as', 'owner@localhost'])).secret;

/** Verifies a received request as a receiver would; returns the parsed payload (throws if no signature matches). */
function verify(secret: string, got: Receiver['received'][number]): Job {
  const h = got.headers;
  return new Webhook(secret).verify(got.body, {
    'webhook-id': String(h['webhook-id']),
    'webhook-timestamp': String(h['webhook-timestamp']),
    'webhook-signature': String(h['webhook-signature']),
  }) as Job;
}

describe('webhooks on the compiled binary', { timeout: 90_000 }, () => {
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
    await cleanup();
  });

  it('a webhook whose receiver is down across a server restart is delivered after the restart', async () => {
    const dir = tempDir();
    const args = ['--port', '0', '--data-dir', dir, '--allow-private-urls', ...FAST];
    const first = await startServer(args);
    const token = await tokenOf(first);
    // Learned once the server listens, so the server itself cannot be on it.
    const port = await freePort();
    const hook = `http://127.0.0.1:${port}/hook`;
    const jobId = await createJob(first.url, token, hook);

    // The job ends, the first attempt finds nobody listening, and a retry is planned ~5 s later.
    const [pending] = await waitFor(
      'the first, failed attempt',
      () => deliveries(first.url, token, jobId),
      (items) => items[0]?.attempts.length === 1,
    );
    expect(pending).toMatchObject({ event: 'completed', url: hook, state: 'pending' });
    const [attempt1] = pending!.attempts;
    expect(attempt1).toMatchObject({ attempt: 1, status: null, error: 'connection refused' });
    const wait = Date.parse(attempt1!.next_retry_at!) - Date.parse(attempt1!.attempted_at);
    expect(wait).toBeGreaterThanOrEqual(4000 - 5); // 5 s -20%, give or take the attempt's own duration
    expect(wait).toBeLessThanOrEqual(6000 + 1000);
    expect(pending!.next_attempt_at).toBe(attempt1!.next_retry_at);
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    receiver = await new Receiver().start(port);
    const second = await startServer(args);
    await second.waitForStdout(WORKER_LINE);
    await waitFor('the retry after the restart', () => receiver!.received.length, (n) => n > 0);

    const got = receiver.received[0]!;
    expect(got.path).toBe('/hook');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toBe('mediagen-webhooks/1');
    const payload = verify(await secretOf(dir), got);
    expect(payload).toEqual(JSON.parse(got.body));
    expect(payload).toMatchObject({ job_id: jobId, status: 'completed', type: 'image/vendor-b/model-b-1' });
    // Output URLs are absolute, under the URL of the process that sent them.
    expect(payload.result!.urls).toHaveLength(1);
    expect(payload.result!.urls[0]!.startsWith(`${second.url}/outputs/`)).toBe(true);
    expect((await api(second.url, `/jobs/${jobId}`, token)).body).toEqual(payload);
    const image = await fetch(payload.result!.urls[0]!);
    expect(image.status).toBe(200);
    await image.arrayBuffer();

    const [delivered] = await waitFor(
      'the delivery log to say delivered',
      () => deliveries(second.url, token, jobId),
      (items) => items[0]?.state === 'delivered',
    );
    expect(delivered).toMatchObject({ webhook_id: got.headers['webhook-id'], event: 'completed', url: hook, next_attempt_at: null });
    expect(delivered!.webhook_id).toBe(pending!.webhook_id);
    expect(delivered!.attempts).toHaveLength(2);
    expect(delivered!.attempts[0]).toEqual(attempt1);
    expect(delivered!.attempts[1]).toMatchObject({ attempt: 2, status: 200, error: null, next_retry_at: null });
    // Not before it was due, even though the restart came sooner.
    expect(Date.parse(delivered!.attempts[1]!.attempted_at)).toBeGreaterThanOrEqual(Date.parse(attempt1!.next_retry_at!));
    expect(receiver.received).toHaveLength(1);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });

  it('refuses a loopback webhook at the door without --allow-private-urls, and creates no job', async () => {
    receiver = await new Receiver().start();
    const server = await startServer(['--port', '0', '--data-dir', tempDir(), ...FAST]);
    const token = await tokenOf(server);
    const res = await fetch(`${server.url}${B1}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-webhook-url': `${receiver.url}/hook` },
      body: JSON.stringify({ prompt: 'a fox' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'X-Webhook-URL refused: 127.0.0.1 is a loopback address; start the server with --allow-private-urls to allow it',
    });
    expect((await api(server.url, '/jobs', token)).body).toMatchObject({ items: [] });
    expect(receiver.received).toEqual([]);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });

  it('a worker without --allow-private-urls refuses a loopback webhook the API took, and the delivery log says why', async () => {
    const dir = tempDir();
    receiver = await new Receiver().start();
    // The API process has the flag, so the URL passes the door; the worker has not.
    const apiProcess = await startServer(['--role', 'api', '--port', '0', '--data-dir', dir, '--allow-private-urls']);
    const token = await tokenOf(apiProcess);
    await apiProcess.waitForStdout(/API only/);
    const worker = await startServer(['--role', 'worker', '--data-dir', dir, '--public-url', apiProcess.url, ...FAST], { firstLine: WORKER_LINE });
    const hook = `${receiver.url}/hook`;
    const jobId = await createJob(apiProcess.url, token, hook);

    const [refused] = await waitFor(
      'the refusal',
      () => deliveries(apiProcess.url, token, jobId),
      (items) => items[0] !== undefined && items[0].state !== 'pending',
    );
    expect(refused).toMatchObject({ event: 'completed', url: hook, state: 'refused', next_attempt_at: null });
    expect(refused!.attempts).toHaveLength(1);
    expect(refused!.attempts[0]).toMatchObject({ attempt: 1, status: null, next_retry_at: null });
    expect(refused!.attempts[0]!.error).toBe('webhook URL refused: 127.0.0.1 is a loopback address; start the server with --allow-private-urls to allow it');
    // The job itself is not affected.
    expect((await api(apiProcess.url, `/jobs/${jobId}`, token)).body).toMatchObject({ status: 'completed' });

    // Not retried: two backstop polls later, still one attempt and nothing received.
    await new Promise((r) => setTimeout(r, 600));
    expect((await deliveries(apiProcess.url, token, jobId))[0]!.attempts).toHaveLength(1);
    expect(receiver.received).toEqual([]);
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
    expect(await apiProcess.stop()).toEqual({ code: 0, signal: null });
  });

  it('a worker-only process started with --public-url sends payload URLs under the API process', async () => {
    const dir = tempDir();
    receiver = await new Receiver().start();
    // The receiver is on loopback: both processes need the flag (the API checks at the door).
    const apiProcess = await startServer(['--role', 'api', '--port', '0', '--data-dir', dir, '--allow-private-urls']);
    const token = await tokenOf(apiProcess);
    await apiProcess.waitForStdout(/API only/);
    const worker = await startServer(['--role', 'worker', '--data-dir', dir, '--allow-private-urls', '--public-url', apiProcess.url, ...FAST], {
      firstLine: WORKER_LINE,
    });

    const jobId = await createJob(apiProcess.url, token, `${receiver.url}/hook`);
    await waitFor('the webhook', () => receiver!.received.length, (n) => n > 0);
    const got = receiver.received[0]!;
    const payload = verify(await secretOf(dir), got);
    expect(payload).toMatchObject({ job_id: jobId, status: 'completed' });
    expect(payload.result!.urls).toHaveLength(1);
    expect(payload.result!.urls[0]!.startsWith(`${apiProcess.url}/outputs/`)).toBe(true);
    // What the API shows, and the URL opens on the API process.
    expect((await api(apiProcess.url, `/jobs/${jobId}`, token)).body).toEqual(payload);
    const image = await fetch(payload.result!.urls[0]!);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toMatch(/^image\//);
    await image.arrayBuffer();

    const [delivered] = await waitFor(
      'the delivery log to say delivered',
      () => deliveries(apiProcess.url, token, jobId),
      (items) => items[0]?.state === 'delivered',
    );
    expect(delivered).toMatchObject({ webhook_id: got.headers['webhook-id'], attempts: [{ attempt: 1, status: 200, error: null }] });
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
    expect(await apiProcess.stop()).toEqual({ code: 0, signal: null });
  });

  it('sends the webhook of a job that ends during the SIGTERM grace period before the process exits', async () => {
    const dir = tempDir();
    receiver = await new Receiver().start();
    const server = await startServer(['--port', '0', '--data-dir', dir, '--allow-private-urls', '--engine-latency-ms', '1500', '--shutdown-grace-ms', '10000']);
    const token = await tokenOf(server);
    const jobId = await createJob(server.url, token, `${receiver.url}/hook`);
    await new Promise((r) => setTimeout(r, 300));
    const exit = await server.stop('SIGTERM');
    expect(exit.code).toBe(0);
    expect(receiver.received).toHaveLength(1);
    expect(verify(await secretOf(dir), receiver.received[0]!)).toMatchObject({ job_id: jobId, status: 'completed' });
  });


  it.runIf(TEST_DATABASE_URL)('on PostgreSQL, the event of a DELETE on an api process is sent by the worker process at once (NOTIFY)', async () => {
    const db = await createPostgresDatabase();
    try {
      const dir = tempDir();
      receiver = await new Receiver().start();
      const apiProcess = await startServer(['--role', 'api', '--port', '0', '--data-dir', dir, '--database-url', db.url, '--allow-private-urls']);
      const token = await tokenOf(apiProcess);
      // A 10-minute poll: only the notification can wake the worker's sender in time.
      await startServer(
        ['--role', 'worker', '--data-dir', dir, '--database-url', db.url, '--poll-interval-ms', '600000', '--engine-latency-ms', '60000', '--allow-private-urls'],
        { firstLine: WORKER_LINE },
      );
      const jobId = await createJob(apiProcess.url, token, `${receiver.url}/hook`);
      await waitFor('the job to start', () => api(apiProcess.url, `/jobs/${jobId}`, token), (r) => r.body.status === 'scheduled' || r.body.status === 'processing');
      expect((await api(apiProcess.url, `/jobs/${jobId}`, token, { method: 'DELETE' })).status).toBe(200);
      const got = await waitFor('the cancelled event', () => receiver!.received, (r) => r.length > 0, 5_000);
      expect(JSON.parse(got[0]!.body)).toMatchObject({ job_id: jobId, status: 'cancelled' });
    } finally {
      await cleanup();
      await db.drop();
    }
  });

});
