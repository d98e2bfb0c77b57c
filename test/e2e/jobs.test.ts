import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresDatabase, TEST_DATABASE_URL } from '../helpers/backends.js';
import { readPngSize } from '../helpers/media.js';
import { api, bash, cleanup, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const BODY = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' };
const WORKER_LINE = /^mediagen: running up to \d+ jobs at once/;

async function tokenOf(server: Server): Promise<string> {
  const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  return token!;
}

/** stdout of a command that must succeed. */
async function sh(command: string): Promise<string> {
  const r = await bash(command);
  if (r.code !== 0) throw new Error(`${command} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

type Job = { job_id: string; status: string; result?: { urls: string[] }; error?: { code: string } };

/** Polls GET /jobs/{id} until `done` holds. */
async function waitForJob(base: string, token: string, id: string, done: (j: Job) => boolean, timeoutMs = 30_000): Promise<Job> {
  const until = Date.now() + timeoutMs;
  let last: Job | undefined;
  while (Date.now() < until) {
    last = (await api(base, `/jobs/${id}`, token)).body as unknown as Job;
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} did not get there in ${timeoutMs} ms; last seen ${JSON.stringify(last)}`);
}

const create = async (base: string, token: string) => {
  const r = await api(base, `/generate/${MODEL}`, token, { method: 'POST', body: BODY });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.job_id as string;
};

describe('jobs on the compiled binary', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  it("the README's curl line makes a job that a second curl shows completed, with a URL that opens as an image", async () => {
    const server = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '300']);
    const [, curl] = await server.waitForStdout(/^ {2}(curl .+)\n/m);
    const token = await tokenOf(server);
    const created = JSON.parse(await sh(curl!)) as Job;
    const second = `curl -s ${server.url}/jobs/${created.job_id} -H "Authorization: Bearer ${token}"`;
    let job = JSON.parse(await sh(second)) as Job;
    for (let i = 0; i < 300 && job.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      job = JSON.parse(await sh(second)) as Job;
    }
    expect(job.status).toBe('completed');
    const url = job.result!.urls[0]!;
    expect(url.startsWith(`${server.url}/outputs/`)).toBe(true);
    const image = await fetch(url);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(readPngSize(Buffer.from(await image.arrayBuffer()))).toEqual({ width: 1344, height: 756 });
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });

  it('a server killed with SIGKILL mid-job is restarted and the job completes, exactly once', async () => {
    const dir = tempDir();
    const args = ['--port', '0', '--data-dir', dir, '--engine-latency-ms', '3000', '--lease-ms', '1000', '--poll-interval-ms', '100'];
    const first = await startServer(args);
    const token = await tokenOf(first);
    const id = await create(first.url, token);
    await waitForJob(first.url, token, id, (j) => j.status === 'processing');
    first.child.kill('SIGKILL');
    await first.exited();

    const second = await startServer(args);
    await second.waitForStdout(/^mediagen: running up to/m);
    const done = await waitForJob(second.url, token, id, (j) => j.status === 'completed');
    const image = await fetch(done.result!.urls[0]!);
    expect(image.status).toBe(200);
    expect(readPngSize(Buffer.from(await image.arrayBuffer()))).toEqual({ width: 1344, height: 756 });
    expect(await second.stop()).toEqual({ code: 0, signal: null });

    const db = new SQLite(join(dir, 'mediagen.db'), { readonly: true });
    const row = db.prepare('SELECT status, attempts, lease_id, output_key FROM jobs WHERE id = ?').get(id) as Record<string, unknown>;
    db.close();
    expect(row).toMatchObject({ status: 'completed', attempts: 2, lease_id: null });
    // One output directory, holding the output alone (the killed attempt's files were replaced).
    expect(readdirSync(join(dir, 'outputs'))).toEqual([row.output_key]);
    expect(readdirSync(join(dir, 'outputs', row.output_key as string))).toEqual(['output.png']);
  });

  it('SIGTERM hands a job that outlives the grace period back, and the next start finishes it', async () => {
    const dir = tempDir();
    const args = ['--port', '0', '--data-dir', dir, '--engine-latency-ms', '60000', '--shutdown-grace-ms', '200'];
    const first = await startServer(args);
    const token = await tokenOf(first);
    const id = await create(first.url, token);
    await waitForJob(first.url, token, id, (j) => j.status === 'scheduled');
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    const second = await startServer(['--port', '0', '--data-dir', dir, '--engine-latency-ms', '0']);
    const done = await waitForJob(second.url, token, id, (j) => j.status === 'completed');
    expect(done.result!.urls).toHaveLength(1);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });

  interface SharedStore {
    readonly name: string;
    /**
     * Workers are woken at once (PostgreSQL's NOTIFY; SQLite's wake sockets), so their poll is set
     * too slow to matter: a job that runs, or a DELETE that stops a run, proves the wake-up.
     */
    readonly pollMs: string;
    open(): Promise<{ flags: string[]; drop(): Promise<void> }>;
  }
  const stores: SharedStore[] = [
    { name: 'SQLite', pollMs: '600000', open: async () => ({ flags: [], drop: async () => undefined }) },
    ...(TEST_DATABASE_URL
      ? [
          {
            name: 'PostgreSQL',
            pollMs: '600000',
            open: async () => {
              const pg = await createPostgresDatabase();
              return { flags: ['--database-url', pg.url], drop: pg.drop };
            },
          },
        ]
      : []),
  ];

  describe.each(stores)('scaled out on $name', ({ pollMs, open: database }) => {
    /** An api process and a worker process on one store, with the worker's extra flags. */
    async function pair(db: { flags: string[] }, workerFlags: string[]) {
      const dir = tempDir();
      const apiProcess = await startServer(['--role', 'api', '--port', '0', '--data-dir', dir, ...db.flags]);
      const token = await tokenOf(apiProcess);
      await apiProcess.waitForStdout(/API only/);
      const worker = await startServer(['--role', 'worker', '--data-dir', dir, '--poll-interval-ms', pollMs, ...workerFlags, ...db.flags], {
        firstLine: WORKER_LINE,
      });
      return { apiProcess, worker, token };
    }

    it('an api process takes jobs and a separate worker process runs them', async () => {
      const db = await database();
      try {
        const { apiProcess, worker, token } = await pair(db, ['--engine-latency-ms', '0']);
        const id = await create(apiProcess.url, token);
        const done = await waitForJob(apiProcess.url, token, id, (j) => j.status === 'completed', 20_000);
        const output = await fetch(done.result!.urls[0]!);
        expect(output.status).toBe(200);
        expect((await output.arrayBuffer()).byteLength).toBeGreaterThan(1000);
        expect(await worker.stop()).toEqual({ code: 0, signal: null });
        expect(await apiProcess.stop()).toEqual({ code: 0, signal: null });
      } finally {
        await cleanup();
        await db.drop();
      }
    });

    it('a DELETE on the api process stops the run in the worker process at once', async () => {
      const db = await database();
      try {
        // Heartbeats come every 10 s here: only the wake-up (NOTIFY, wake socket) can stop the run sooner.
        const { apiProcess, worker, token } = await pair(db, ['--engine-latency-ms', '60000', '--lease-ms', '30000']);
        const id = await create(apiProcess.url, token);
        await waitForJob(apiProcess.url, token, id, (j) => j.status === 'scheduled');
        const asked = Date.now();
        expect((await api(apiProcess.url, `/jobs/${id}`, token, { method: 'DELETE' })).status).toBe(200);
        const until = Date.now() + 5_000;
        while (!/"why":"cancelled"/.test(worker.stderr()) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
        expect(worker.stderr()).toMatch(/"why":"cancelled"/);
        expect(Date.now() - asked).toBeLessThan(5_000);
        expect(await worker.stop()).toEqual({ code: 0, signal: null });
        expect(await apiProcess.stop()).toEqual({ code: 0, signal: null });
      } finally {
        await cleanup();
        await db.drop();
      }
    });
  });
});
