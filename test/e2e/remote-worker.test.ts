import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { isPng, readPngSize } from '../helpers/media.js';
import { Receiver } from '../helpers/receiver.js';
import { RUN_TIMEOUT_MS, adminJson, api, cleanup, oneLineError, run, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';
import { startRemoteWorker, stopProcesses } from './processes.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const BODY = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' };

type Job = { job_id: string; status: string; result?: { urls: string[] }; error?: { code: string; message: string } };
type Usage = { items: Array<{ job_id: string; type: string; cost_usd: string }> };
type Balance = { balance_usd: string; held_usd: string };

/** A server whose model-a-2 medium jobs run only on remote workers of pool gpu-a. */
async function remoteServer(extra: string[] = []): Promise<{ server: Server; dir: string; apiToken: string; workerToken: string }> {
  const dir = tempDir();
  const config = join(dir, 'mediagen.json');
  writeFileSync(config, JSON.stringify({ model_engines: { [MODEL]: 'remote:gpu-a' } }));
  const server = await startServer(['--port', '0', '--data-dir', dir, '--config', config, '--poll-interval-ms', '100', ...extra]);
  const [, apiToken] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  const created = await adminJson<{ token: string }>(dir, ['worker-token', 'create', '--name', 'gpu-a-box', '--models', 'image/*']);
  expect(created.token).toMatch(/^mgw_/);
  return { server, dir, apiToken: apiToken!, workerToken: created.token };
}

async function waitForJob(base: string, token: string, id: string, done: (j: Job) => boolean, timeoutMs = 60_000): Promise<Job> {
  const until = Date.now() + timeoutMs;
  let last: Job | undefined;
  while (Date.now() < until) {
    last = (await api(base, `/jobs/${id}`, token)).body as unknown as Job;
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} did not get there in ${timeoutMs} ms; last seen ${JSON.stringify(last)}`);
}

async function createJob(base: string, token: string): Promise<string> {
  const r = await api(base, `/generate/${MODEL}`, token, { method: 'POST', body: BODY });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.job_id as string;
}

const micros = (usd: string) => Math.round(Number(usd) * 1_000_000);

/** The job was charged exactly once: one usage line, and the balance is the start's $10 minus that line. */
async function expectBilledOnce(base: string, dir: string, apiToken: string, id: string): Promise<void> {
  const usage = (await api(base, '/usage', apiToken)).body as unknown as Usage;
  const lines = usage.items.filter((i) => i.job_id === id);
  expect(lines).toHaveLength(1);
  expect(lines[0]!.type).toBe(MODEL);
  expect(micros(lines[0]!.cost_usd)).toBeGreaterThan(0);
  const balance = await adminJson<Balance>(dir, ['balance', 'show', '--workspace', 'default']);
  expect(micros(balance.held_usd)).toBe(0);
  expect(micros(balance.balance_usd)).toBe(10_000_000 - micros(lines[0]!.cost_usd));
}

/** The worker's JSON log lines. */
const logLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('mediagen remote-worker against a real server', { timeout: 120_000 }, () => {
  afterEach(async () => {
    await stopProcesses();
    await cleanup();
  });

  it('runs a remote-bound job with the local engine: a real PNG, billed once', async () => {
    const { server, dir, apiToken, workerToken } = await remoteServer();
    const id = await createJob(server.url, apiToken);
    const worker = await startRemoteWorker(['--server', server.url, '--pool', 'gpu-a', '--engine-latency-ms', '0', '--worker-id', 'gpu-a-1'], workerToken);
    const job = await waitForJob(server.url, apiToken, id, (j) => j.status === 'completed' || j.status === 'failed');
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const url = job.result!.urls[0]!;
    expect(url.startsWith(`${server.url}/outputs/`)).toBe(true);
    const res = await fetch(url);
    expect(res.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await res.arrayBuffer());
    expect(isPng(png)).toBe(true);
    expect(readPngSize(png)).toEqual({ width: 1344, height: 756 });
    await expectBilledOnce(server.url, dir, apiToken, id);
    // The token is never logged, by the worker or the server.
    expect(worker.stderr() + worker.stdout() + server.stderr() + server.stdout()).not.toContain(workerToken);
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it("inputs reach the worker: an asset through its signed URL, a data: URI decoded on the worker, a fetch failure as the job's error", async () => {
    const { server, apiToken, workerToken } = await remoteServer(['--allow-private-urls']);
    const origin = await new Receiver().start();
    origin.script = [404];
    const png = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#c04020' } }).png().toBuffer();
    const form = new FormData();
    form.append('file', new Blob([png], { type: 'image/png' }), 'card.png');
    const res = await fetch(`${server.url}/assets`, { method: 'POST', headers: { authorization: `Bearer ${apiToken}` }, body: form, signal: AbortSignal.timeout(RUN_TIMEOUT_MS) });
    const asset = (await res.json()) as { image_url: string };
    expect(res.status, JSON.stringify(asset)).toBe(200);
    const ids: string[] = [];
    for (const image_url of [asset.image_url, `data:image/png;base64,${png.toString('base64')}`]) {
      const r = await api(server.url, `/generate/${MODEL}`, apiToken, { method: 'POST', body: { ...BODY, aspect_ratio: '1:1', image_url } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      ids.push(r.body.job_id as string);
    }
    const worker = await startRemoteWorker(['--server', server.url, '--engine-latency-ms', '0', '--concurrency', '2'], workerToken);
    for (const id of ids) {
      const job = await waitForJob(server.url, apiToken, id, (j) => j.status === 'completed' || j.status === 'failed');
      expect(job.status, JSON.stringify(job)).toBe('completed');
      expect(isPng(Buffer.from(await (await fetch(job.result!.urls[0]!)).arrayBuffer()))).toBe(true);
    }
    const missing = await api(server.url, `/generate/${MODEL}`, apiToken, { method: 'POST', body: { ...BODY, image_url: `${origin.url}/missing.png` } });
    const failed = await waitForJob(server.url, apiToken, missing.body.job_id as string, (j) => j.status === 'completed' || j.status === 'failed');
    await origin.close();
    expect(failed.status).toBe('failed');
    expect(failed.error!.code).toBe('input_fetch_failed');
    expect(failed.error!.message).toMatch(/^image_url: /);
    expect(worker.stderr()).not.toContain('"level":50');
  });

  it('a worker SIGKILLed mid-job: the lease runs out, a second worker takes attempt 2 and completes it, billed once', async () => {
    const { server, dir, apiToken, workerToken } = await remoteServer(['--lease-ms', '2000']);
    const id = await createJob(server.url, apiToken);
    // Slow enough (three waits of 4 s) to be caught in the middle.
    const first = await startRemoteWorker(['--server', server.url, '--pool', 'gpu-a', '--engine-latency-ms', '12000', '--worker-id', 'first'], workerToken);
    await waitForJob(server.url, apiToken, id, (j) => j.status === 'processing' || j.status === 'sampling');
    first.child.kill('SIGKILL');
    expect((await first.exited()).signal).toBe('SIGKILL');

    const second = await startRemoteWorker(['--server', server.url, '--pool', 'gpu-a', '--engine-latency-ms', '300', '--worker-id', 'second'], workerToken);
    const job = await waitForJob(server.url, apiToken, id, (j) => j.status === 'completed' || j.status === 'failed');
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const png = Buffer.from(await (await fetch(job.result!.urls[0]!)).arrayBuffer());
    expect(readPngSize(png)).toEqual({ width: 1344, height: 756 });
    const claimed = logLines(second.stderr()).filter((l) => l.msg === 'job claimed' && l.jobId === id);
    expect(claimed.map((l) => l.attempt)).toEqual([2]);
    expect(logLines(first.stderr()).filter((l) => l.msg === 'job claimed').map((l) => l.attempt)).toEqual([1]);
    await expectBilledOnce(server.url, dir, apiToken, id);
  });

  it('SIGTERM hands an unfinished job back: another worker completes it', async () => {
    const { server, apiToken, workerToken } = await remoteServer();
    const id = await createJob(server.url, apiToken);
    const first = await startRemoteWorker(['--server', server.url, '--engine-latency-ms', '9000', '--shutdown-grace-ms', '200'], workerToken);
    await waitForJob(server.url, apiToken, id, (j) => j.status === 'processing' || j.status === 'sampling');
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(first.stderr()).toContain('job handed back at shutdown');
    // Back in the queue at once, not after the lease.
    await waitForJob(server.url, apiToken, id, (j) => j.status === 'queued');
    await startRemoteWorker(['--server', server.url, '--engine-latency-ms', '0'], workerToken);
    expect((await waitForJob(server.url, apiToken, id, (j) => j.status === 'completed' || j.status === 'failed')).status).toBe('completed');
  });

  it('--help prints the usage; a missing token or a refused one is a one-line error', async () => {
    const help = await run(['remote-worker', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: mediagen remote-worker --server URL');
    expect(oneLineError(await run(['remote-worker', '--server', 'http://127.0.0.1:9']))).toBe(
      'mediagen: give a worker token with --token or MEDIAGEN_WORKER_TOKEN (mediagen admin worker-token create)',
    );
    const { server } = await remoteServer();
    const refused = await run(['remote-worker', '--server', server.url], { env: { MEDIAGEN_WORKER_TOKEN: 'mgw_not-a-real-token' } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^mediagen: claim: the server answered HTTP 401/m);
    expect(refused.stderr).not.toContain('mgw_not-a-real-token');
  });
});
