import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseUsd } from '../../src/domain/money.js';
import { sendJson, startStub } from '../client/stub.js';
import type { Stub } from '../client/stub.js';
import { isPng, readPngSize } from '../helpers/media.js';
import { Receiver } from '../helpers/receiver.js';
import { RUN_TIMEOUT_MS, adminJson, api, cleanup, startServer, tempDir } from './binary.js';
import { startProcess, stopProcesses } from './processes.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/python-worker/', import.meta.url));
const CONFIG = `${EXAMPLE}mediagen.json`;
const GRADIENT = 'image/acme/gradient-v1';
const TONE = 'audio/acme/tone-v1';

const python = spawnSync('python3', ['--version']).status === 0;
if (!python) console.warn('python-worker.test.ts: skipped, python3 is not on PATH (CI has it)');

type Job = { job_id: string; status: string; result?: { urls: string[] }; error?: unknown };
type Usage = { items: Array<{ job_id: string; type: string; cost_usd: string }> };

/** The rate (micro-USD) of a model's price rule in the example config. */
function rateOf(model: string, rule: string): number {
  const config = JSON.parse(readFileSync(CONFIG, 'utf8')) as { models: Array<{ path: string; price: Record<string, string> }> };
  const rate = parseUsd(String(config.models.find((m) => m.path === model)!.price[rule]));
  if (rate === undefined) throw new Error(`no ${rule} rate for ${model}`);
  return Number(rate);
}

async function generate(base: string, token: string, model: string, body: unknown, webhook: string): Promise<string> {
  const res = await fetch(`${base}/generate/${model}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-webhook-url': webhook },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(RUN_TIMEOUT_MS),
  });
  const answer = (await res.json()) as { job_id: string };
  expect(res.status, JSON.stringify(answer)).toBe(200);
  return answer.job_id;
}

async function waitForEnd(base: string, token: string, id: string, timeoutMs = 60_000): Promise<Job> {
  const until = Date.now() + timeoutMs;
  let last: Job | undefined;
  while (Date.now() < until) {
    last = (await api(base, `/jobs/${id}`, token)).body as unknown as Job;
    if (last.status === 'completed' || last.status === 'failed') return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} did not end in ${timeoutMs} ms; last seen ${JSON.stringify(last)}`);
}

async function waitFor<T>(check: () => T | undefined, what: string, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!python)('the Python example worker (examples/python-worker) against a real server', { timeout: 120_000 }, () => {
  let receiver: Receiver | undefined;
  let stub: Stub | undefined;
  afterEach(async () => {
    await stopProcesses();
    await cleanup();
    await receiver?.close();
    await stub?.close();
    stub = undefined;
  });

  const gaps = (s: Stub) => s.seen.slice(1).map((r, i) => r.at - s.seen[i]!.at);

  it('waits out Retry-After on 429 and 503 before retrying a job call, up to its bound', async () => {
    stub = await startStub((_req, res, n) => {
      if (n === 0) return sendJson(res, 503, { error: 'storage' }, { 'retry-after': '1' });
      if (n === 1) return sendJson(res, 429, { error: 'busy' }, { 'retry-after': new Date(Date.now() + 3000).toUTCString() });
      if (n === 2) return sendJson(res, 503, { error: 'later' }, { 'retry-after': '3600' });
      sendJson(res, 200, { lease_expires_at: '2030-01-01T00:00:00Z', status: 'processing' });
    });
    const script = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(EXAMPLE)})`,
      'import worker',
      `c = worker.Client(${JSON.stringify(stub.url)}, "mgw_test")`,
      'c.max_retry_after = 1.5',
      `print(json.dumps(c.call("progress", "POST", ${JSON.stringify(`${stub.url}/worker/v1/jobs/j1/progress`)}, {"lease_id": "l1"})))`,
    ].join('\n');
    const py = startProcess('python3', ['-c', script]);
    expect(await py.exited()).toEqual({ code: 0, signal: null });
    expect(JSON.parse(py.stdout())).toEqual({ lease_expires_at: '2030-01-01T00:00:00Z', status: 'processing' });
    const [first, second, third] = gaps(stub);
    // Backoff alone would be 0.125 to 1 s; Retry-After asks for 1 s, then 2 to 3 s (an HTTP date) and an hour, both bounded to 1.5 s.
    expect(first).toBeGreaterThanOrEqual(950);
    expect(second).toBeGreaterThanOrEqual(1450);
    expect(third).toBeGreaterThanOrEqual(1450);
    expect(third).toBeLessThan(2500);
  });

  it('pauses claims for the Retry-After of a 503 claim answer', async () => {
    stub = await startStub((_req, res, n) => {
      if (n === 0) return sendJson(res, 503, { error: 'storage' }, { 'retry-after': '2' });
      setTimeout(() => sendJson(res, 200, { jobs: [] }), 200);
    });
    const worker = startProcess('python3', [`${EXAMPLE}worker.py`, '--server', stub.url, '--worker-id', 'py-1'], { env: { MEDIAGEN_WORKER_TOKEN: 'mgw_test' } });
    await worker.waitFor(/^worker\.py: ready$/m);
    await waitFor(() => (stub!.seen.length >= 2 ? true : undefined), 'a second claim');
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    // Without Retry-After, the first pause after a failed claim is 0.5 s.
    expect(gaps(stub)[0]).toBeGreaterThanOrEqual(1950);
    expect(stub.seen[0]).toMatchObject({ method: 'POST', url: '/worker/v1/claim' });
  });

  it('serves the custom gradient and tone models: a real PNG and WAV, webhooks, and charges by the price rules', async () => {
    receiver = await new Receiver().start();
    const dir = tempDir();
    const server = await startServer(['--config', CONFIG, '--port', '0', '--data-dir', dir, '--allow-private-urls', '--poll-interval-ms', '100']);
    const [, apiToken] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    const { token } = await adminJson<{ token: string }>(dir, ['worker-token', 'create', '--name', 'python-box', '--models', 'image/acme/*', '--models', 'audio/acme/*']);

    const worker = startProcess('python3', [`${EXAMPLE}worker.py`, '--server', server.url, '--worker-id', 'py-1'], { env: { MEDIAGEN_WORKER_TOKEN: token } });
    await worker.waitFor(/^worker\.py: ready$/m);

    const gradient = await generate(server.url, apiToken!, GRADIENT, { width: 1000, height: 1000, colors: ['#1e3a8a', '#f472b6'] }, `${receiver.url}/gradient`);
    const tone = await generate(server.url, apiToken!, TONE, { frequency: 440, duration: 3 }, `${receiver.url}/tone`);

    const image = await waitForEnd(server.url, apiToken!, gradient);
    expect(image.status, JSON.stringify(image)).toBe('completed');
    const png = Buffer.from(await (await fetch(image.result!.urls[0]!)).arrayBuffer());
    expect(isPng(png)).toBe(true);
    expect(readPngSize(png)).toEqual({ width: 1000, height: 1000 });

    const sound = await waitForEnd(server.url, apiToken!, tone);
    expect(sound.status, JSON.stringify(sound)).toBe('completed');
    const res = await fetch(sound.result!.urls[0]!);
    expect(res.headers.get('content-type')).toMatch(/^audio\/(x-)?wav/);
    const wav = Buffer.from(await res.arrayBuffer());
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.toString('latin1', 8, 12)).toBe('WAVE');
    // 16-bit mono at 44.1 kHz: 3 s is 132300 frames of 2 bytes after the 44-byte header.
    expect(wav.readUInt16LE(22)).toBe(1);
    expect(wav.readUInt32LE(24)).toBe(44_100);
    expect(wav.length).toBe(44 + 3 * 44_100 * 2);

    for (const [path, id] of [['/gradient', gradient], ['/tone', tone]] as const) {
      const hook = await waitFor(() => receiver!.received.find((r) => r.path === path), `the webhook of ${path}`);
      expect(JSON.parse(hook.body)).toMatchObject({ job_id: id, status: 'completed' });
    }

    const usage = (await api(server.url, '/usage', apiToken!)).body as unknown as Usage;
    const cost = (id: string) => usage.items.filter((i) => i.job_id === id).map((i) => Math.round(Number(i.cost_usd) * 1_000_000));
    // 1000 x 1000 is one megapixel; 3 s of tone is three seconds.
    expect(cost(gradient)).toEqual([rateOf(GRADIENT, 'per_megapixel')]);
    expect(cost(tone)).toEqual([3 * rateOf(TONE, 'per_second')]);

    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(worker.stderr() + worker.stdout()).not.toContain(token);
  });
});
