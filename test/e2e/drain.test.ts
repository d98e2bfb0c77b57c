/**
 * Graceful drain on the compiled binary, on PostgreSQL (docs/operations.md): an API process
 * restarted under load loses no request it answered and no job, and a worker stopped mid-job hands
 * the job back for another worker, which completes it, billed once.
 */
import { request } from 'node:http';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { Mediagen } from '../../packages/client/src/index.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { createPostgresDatabase, TEST_DATABASE_URL } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { Receiver } from '../helpers/receiver.js';
import { openEvents } from '../helpers/sse.js';
import { api, cleanup, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const PROMPT = 'a lighthouse on a cliff at dusk';
const BODY = { prompt: PROMPT, aspect_ratio: '16:9', resolution: '1K' };
const WORKER_LINE = /^mediagen: running up to \d+ jobs at once/;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One answer, or how the connection failed (`code`: ECONNREFUSED, ECONNRESET...). */
type Outcome =
  | { readonly status: number; readonly body: Record<string, unknown>; readonly headers: Record<string, string | string[] | undefined> }
  | { readonly code: string };

/** A POST on a connection of its own (no keep-alive pool), so each outcome belongs to one request. */
function post(base: string, path: string, token: string, body: unknown, headers: Record<string, string> = {}): Promise<Outcome> {
  const text = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      new URL(path, base),
      {
        method: 'POST',
        agent: false,
        timeout: 30_000,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8').on('data', (d: string) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: data ? (JSON.parse(data) as Record<string, unknown>) : {}, headers: res.headers }));
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code ?? err.message }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code ?? err.message }));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(text);
  });
}

async function tokenOf(server: Server): Promise<string> {
  const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  return token!;
}

async function sql<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Every job terminal (or the timeout): the jobs' ids and statuses. */
async function allEnded(url: string, timeoutMs = 40_000): Promise<Map<string, string>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const rows = await sql<{ id: string; status: string }>(url, 'SELECT id, status FROM jobs');
    const jobs = new Map(rows.map((r) => [r.id, r.status]));
    if ([...jobs.values()].every((s) => TERMINAL.has(s)) || Date.now() > until) return jobs;
    await sleep(200);
  }
}

/** Each job's ledger: it ended once (one terminal transition), was held once and charged once. */
async function expectEachEndedAndBilledOnce(url: string, ids: readonly string[]): Promise<void> {
  const ends = await sql<{ job_id: string; n: string }>(
    url,
    "SELECT job_id, count(*) AS n FROM job_transitions WHERE status IN ('completed', 'failed', 'cancelled') GROUP BY job_id",
  );
  const ledger = await sql<{ job_id: string; kind: string; n: string }>(url, 'SELECT job_id, kind, count(*) AS n FROM ledger_entries WHERE job_id IS NOT NULL GROUP BY job_id, kind');
  for (const id of ids) {
    expect(ends.filter((e) => e.job_id === id).map((e) => Number(e.n)), `terminal transitions of ${id}`).toEqual([1]);
    const kinds = ledger.filter((l) => l.job_id === id).map((l) => `${l.kind}:${l.n}`).sort();
    expect(kinds, `ledger of ${id}`).toEqual(['charge:1', 'hold:1']);
  }
  const [ws] = await sql<{ id: string }>(url, 'SELECT id FROM workspaces');
  const store = await openPostgresStore(url, { poolSize: 1 });
  try {
    await expectLedgerConsistent(store, ws!.id);
  } finally {
    await store.close();
  }
}

/** The JSON log lines of a process's stderr with this message. */
const logLines = (stderr: string, msg: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === msg);

describe.runIf(TEST_DATABASE_URL)('graceful drain on PostgreSQL (compiled binary)', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  it('an API process restarted under load loses no answered request and no job; waits are answered, streams told to reconnect', async () => {
    const db = await createPostgresDatabase({ migrated: true });
    try {
      const dir = tempDir();
      const store = ['--data-dir', dir, '--database-url', db.url];
      const apiFlags = ['--role', 'api', '--drain-delay-ms', '1200', '--shutdown-grace-ms', '15000', '--max-concurrent-jobs', '64', ...store];
      const first = await startServer(['--port', '0', ...apiFlags]);
      const token = await tokenOf(first);
      const port = new URL(first.url).port;
      const base = first.url;
      // Jobs take about 4 s: some are running, and some waits are held, when the listener closes.
      await startServer(['--role', 'worker', '--engine-latency-ms', '4000', '--worker-concurrency', '32', '--poll-interval-ms', '200', ...store], { firstLine: WORKER_LINE });

      interface Sent {
        readonly at: number;
        readonly wait: boolean;
        readonly outcome: Outcome;
        readonly answeredAt: number;
      }
      const sent: Sent[] = [];
      let loading = true;
      const submitter = async (n: number) => {
        // One submitter waits for its jobs (Prefer: wait), two do not.
        const wait = n === 2;
        while (loading) {
          const at = Date.now();
          const outcome = await post(base, `/generate/${MODEL}`, token, BODY, wait ? { prefer: 'wait=20' } : {});
          sent.push({ at, wait, outcome, answeredAt: Date.now() });
          await sleep(200);
        }
      };
      const readyz: Array<{ at: number; status: number; error?: unknown }> = [];
      const poller = (async () => {
        while (loading) {
          const at = Date.now();
          const r = await fetch(`${base}/readyz`).then(
            async (res) => ({ at, status: res.status, error: ((await res.json()) as { error?: unknown }).error }),
            () => ({ at, status: 0 }),
          );
          readyz.push(r);
          await sleep(100);
        }
      })();
      const load = [0, 1, 2].map(submitter);
      await sleep(2500);

      // A job watched through the restart: a raw stream, and the typed client.
      const watched = await api(base, `/generate/${MODEL}`, token, { method: 'POST', body: BODY });
      expect(watched.status).toBe(200);
      const watchedId = watched.body.job_id as string;
      const stream = await openEvents(base, `/jobs/${watchedId}/events`, token);
      const firstEvents = await stream.eventsUntil(() => true);
      const seen: string[] = [];
      const followed = new Mediagen({ baseUrl: base, token }).jobs.wait(watchedId, { onUpdate: (j) => seen.push(j.status) });
      // Awaited below; a failure before that must not surface as an unhandled rejection.
      followed.catch(() => undefined);

      const sigterm = Date.now();
      first.child.kill('SIGTERM');
      const rest = await stream.eventsUntil(() => false);
      const closed = Date.now();
      expect(await first.exited()).toEqual({ code: 0, signal: null });
      const exitedAt = Date.now();
      // The replacement, on the same port: requests meanwhile find nothing listening.
      await sleep(300);
      const second = await startServer(['--port', port, ...apiFlags]);
      await sleep(2500);
      loading = false;
      await Promise.all([...load, poller]);
      const done = await followed;
      await second.stop();

      // Every answer was a success with its job, a clean refusal, or no connection at all.
      const answered = sent.filter((s): s is Sent & { outcome: Extract<Outcome, { status: number }> } => 'status' in s.outcome);
      for (const s of answered) expect([200, 503], JSON.stringify(s.outcome)).toContain(s.outcome.status);
      const ok = answered.filter((s) => s.outcome.status === 200);
      for (const s of ok) expect(s.outcome.body.job_id, JSON.stringify(s.outcome.body)).toEqual(expect.any(String));
      const failedConnections = sent.filter((s) => 'code' in s.outcome).map((s) => (s.outcome as { code: string }).code);
      for (const code of failedConnections) expect(['ECONNREFUSED', 'ECONNRESET']).toContain(code);
      expect(failedConnections.length, 'requests sent while nothing listened').toBeGreaterThan(0);

      // Not ready at once, while requests were still taken for the drain delay.
      const draining = readyz.find((r) => r.at >= sigterm && r.status === 503);
      expect(draining?.error).toBe('not ready: draining (the server is shutting down)');
      expect(readyz.filter((r) => r.at < sigterm).every((r) => r.status === 200)).toBe(true);
      expect(ok.some((s) => s.at > draining!.at && s.answeredAt <= exitedAt), 'a request taken while draining').toBe(true);

      // Waits got complete answers; those held when the listener closed, the job as it was then.
      const waits = ok.filter((s) => s.wait);
      for (const s of waits) expect(s.outcome.body).toMatchObject({ job_id: expect.any(String), status: expect.any(String), created_at: expect.any(String) });
      const cut = waits.filter((s) => s.at < closed - 1000 && s.answeredAt >= closed - 1000 && s.answeredAt <= exitedAt && !TERMINAL.has(s.outcome.body.status as string));
      expect(cut.length, 'waits answered at the close with the job as it was').toBeGreaterThan(0);
      for (const s of cut) expect(s.outcome.headers['preference-applied']).toBe('wait=20');

      // The stream's last word was reconnect, not an end; the typed client followed the job to its end.
      expect(firstEvents.map((e) => e.event)).toEqual(['status']);
      expect(rest.at(-1)).toEqual({ kind: 'event', id: undefined, event: 'reconnect', data: { reason: 'server_closing' }, retry: '1000' });
      expect(rest.filter((e) => e.event === 'end')).toEqual([]);
      expect(done.status).toBe('completed');
      expect(seen.at(-1)).toBe('completed');
      expect(new Set(seen).size).toBe(seen.length);

      // Every job answered 200 exists, no other job does, and each ended once, billed once.
      const jobs = await allEnded(db.url);
      const answeredIds = new Set([...ok.map((s) => s.outcome.body.job_id as string), watchedId]);
      expect([...jobs.keys()].sort()).toEqual([...answeredIds].sort());
      expect([...jobs.values()].every((s) => s === 'completed'), JSON.stringify([...jobs])).toBe(true);
      await expectEachEndedAndBilledOnce(db.url, [...answeredIds]);

      // One line as the drain starts, one as it ends, with counts and nothing of the requests.
      const [start] = logLines(first.stderr(), 'shutting down: draining (not ready; the job runner stops claiming)');
      expect(start).toMatchObject({ level: 30, signal: 'SIGTERM', drainDelayMs: 1200, graceMs: 15000 });
      const [end] = logLines(first.stderr(), 'drained');
      expect(end).toMatchObject({ level: 30, requestsCut: 0, jobsRunning: 0, jobsHandedBack: 0 });
      expect(end!.requestsTakenWhileDraining).toBeGreaterThan(0);
      // The drain's 503s on /readyz are no errors to log.
      expect(first.stderr()).not.toMatch(/"level":50/);
      expect(first.stderr()).not.toContain(PROMPT);
      expect(first.stderr()).not.toContain(token);
    } finally {
      await cleanup();
      await db.drop();
    }
  });

  it('a worker stopped mid-job stops claiming at once and hands the job back; another worker completes it, billed once, one webhook', async () => {
    const db = await createPostgresDatabase({ migrated: true });
    const receiver = await new Receiver().start();
    try {
      const dir = tempDir();
      const store = ['--data-dir', dir, '--database-url', db.url, '--allow-private-urls', '--poll-interval-ms', '200'];
      const apiProcess = await startServer(['--role', 'api', '--port', '0', ...store]);
      const token = await tokenOf(apiProcess);
      const worker = await startServer(['--role', 'worker', '--engine-latency-ms', '60000', '--shutdown-grace-ms', '2000', ...store], { firstLine: WORKER_LINE });
      const running = await post(apiProcess.url, `/generate/${MODEL}`, token, BODY, { 'x-webhook-url': `${receiver.url}/hook` });
      const id = ('status' in running && running.body.job_id) as string;
      const until = Date.now() + 15_000;
      while ((await api(apiProcess.url, `/jobs/${id}`, token)).body.status === 'queued' && Date.now() < until) await sleep(50);
      expect((await api(apiProcess.url, `/jobs/${id}`, token)).body.status).not.toBe('queued');

      worker.child.kill('SIGTERM');
      await sleep(300);
      // Created during the worker's grace: it claims nothing new.
      const later = await post(apiProcess.url, `/generate/${MODEL}`, token, BODY);
      const laterId = ('status' in later && later.body.job_id) as string;
      await sleep(800);
      expect((await api(apiProcess.url, `/jobs/${laterId}`, token)).body.status).toBe('queued');
      expect(await worker.exited()).toEqual({ code: 0, signal: null });
      expect((await api(apiProcess.url, `/jobs/${id}`, token)).body.status).toBe('queued');
      expect(worker.stderr()).toContain('job handed back at shutdown');
      const [end] = logLines(worker.stderr(), 'drained');
      expect(end).toMatchObject({ level: 30, jobsRunning: 1, jobsHandedBack: 1, requestsCut: 0 });
      // A graceful hand-back is not a lost worker: the attempt is not counted.
      const [row] = await sql<{ attempts: number }>(db.url, `SELECT attempts FROM jobs WHERE id = '${id}'`);
      expect(Number(row!.attempts)).toBe(0);

      await startServer(['--role', 'worker', '--engine-latency-ms', '200', ...store], { firstLine: WORKER_LINE });
      const jobs = await allEnded(db.url, 30_000);
      expect(Object.fromEntries(jobs)).toEqual({ [id]: 'completed', [laterId]: 'completed' });
      await expectEachEndedAndBilledOnce(db.url, [id, laterId]);
      const hookUntil = Date.now() + 15_000;
      while (receiver.received.length === 0 && Date.now() < hookUntil) await sleep(100);
      await sleep(500);
      expect(receiver.received).toHaveLength(1);
      expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ job_id: id, status: 'completed' });
    } finally {
      await receiver.close();
      await cleanup();
      await db.drop();
    }
  });
});
