import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createPostgresDatabase, TEST_DATABASE_URL } from '../helpers/backends.js';
import { isPng } from '../helpers/media.js';
import { startS3Server } from '../helpers/s3-server.js';
import type { S3Server } from '../helpers/s3-server.js';
import { BIN, RUN_TIMEOUT_MS, cleanup, tempDir } from './binary.js';
import { startProcess, stopProcesses } from './processes.js';

/**
 * compose.yaml as written, without containers (no image registry is reachable from these machines,
 * so PostgreSQL and MinIO cannot be pulled; scripts/image-test.sh proves the image itself): the
 * `api` and `worker` services' commands and environments, interpolated from a `.env` the way
 * Compose does, run as processes of the compiled binary. Only what the containers' network would
 * provide is swapped: the host names `db` and `s3` become this machine's PostgreSQL (a database of
 * this test's) and a real S3-compatible server (s3rver, bucket `mediagen`), and the Dockerfile's
 * `MEDIAGEN_DATA_DIR=/data` and port 8080 a temporary directory and a free port. The docs' admin
 * commands (`docker compose run --rm api admin ...`) then make a tenant, whose job completes on the
 * worker and whose output lands in the bucket and downloads through the API.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
type Service = { command: string[]; environment: Record<string, string | number | boolean> };

/** Compose's interpolation of `${VAR}`, `${VAR:-default}` and `${VAR:?error}` from `.env` (`$$` is a `$`). */
function interpolate(value: string, dotEnv: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Z_][A-Z0-9_]*)(?::([-?])([^}]*))?\}/g, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
    if (whole === '$$') return '$';
    const set = dotEnv[name!];
    if (set !== undefined && set !== '') return set;
    if (op === '-') return arg!;
    if (op === '?') throw new Error(`compose would refuse to start: ${arg}`);
    return '';
  });
}

function service(compose: Record<string, unknown>, name: string, dotEnv: Record<string, string>): { command: string[]; env: Record<string, string> } {
  const s = (compose.services as Record<string, Service>)[name]!;
  const env = Object.fromEntries(Object.entries(s.environment).map(([k, v]) => [k, interpolate(String(v), dotEnv)]));
  return { command: s.command.map((w) => interpolate(w, dotEnv)), env };
}

describe.skipIf(!TEST_DATABASE_URL)('compose.yaml', { timeout: 180_000 }, () => {
  let db: Awaited<ReturnType<typeof createPostgresDatabase>> | undefined;
  let s3: S3Server | undefined;
  afterEach(async () => {
    await stopProcesses();
    await cleanup();
    await s3?.close();
    await db?.drop();
  });

  it('refuses to start without the secrets of its .env', () => {
    const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as Record<string, unknown>;
    expect(() => service(compose, 'api', {})).toThrow(/set POSTGRES_PASSWORD in \.env/);
    expect(() => service(compose, 'worker', { POSTGRES_PASSWORD: 'pw' })).toThrow(/set S3_SECRET_KEY in \.env/);
  });

  it('its api and worker services, as written, serve the docs\' admin commands and complete a job into the bucket', async () => {
    const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as Record<string, unknown>;
    // s3rver takes only its own key pair: the .env's keys, as an operator would set MinIO's.
    const dotEnv = { POSTGRES_PASSWORD: 'compose-secret', S3_ACCESS_KEY: 'S3RVER', S3_SECRET_KEY: 'S3RVER' };
    const api = service(compose, 'api', dotEnv);
    const worker = service(compose, 'worker', dotEnv);
    expect(api.command.slice(0, 1)).toEqual(['serve']);
    expect(worker.env.MEDIAGEN_WORKER_CONCURRENCY).toBe('2');

    const database = (db = await createPostgresDatabase());
    const bucket = (s3 = await startS3Server('mediagen'));
    // The container network's names, and the image's /data and port: what this machine has instead.
    const onThisMachine = (env: Record<string, string>) => {
      expect(env.MEDIAGEN_DATABASE_URL).toBe('postgres://mediagen:compose-secret@db:5432/mediagen');
      expect(env.MEDIAGEN_S3_ENDPOINT).toBe('http://s3:9000');
      return { ...env, MEDIAGEN_DATABASE_URL: database.url, MEDIAGEN_S3_ENDPOINT: bucket.endpoint, MEDIAGEN_DATA_DIR: tempDir('mediagen-compose-'), MEDIAGEN_PORT: '0' };
    };
    const apiEnv = onThisMachine(api.env);
    const apiProc = startProcess(process.execPath, [BIN, ...api.command], { env: apiEnv });
    const [, url] = await apiProc.waitFor(/^mediagen: serving (http:\/\/\S+) /, { timeoutMs: 60_000 });
    const workerProc = startProcess(process.execPath, [BIN, ...worker.command], { env: onThisMachine(worker.env) });
    await workerProc.waitFor(/^mediagen: running up to 2 jobs at once/m, { timeoutMs: 60_000 });

    // docs/deploy.md's `docker compose run --rm api admin ...`: the api service's environment.
    const admin = async <T>(args: string[]): Promise<T> => {
      const proc = startProcess(process.execPath, [BIN, 'admin', ...args, '--json'], { env: apiEnv });
      const { code } = await proc.exited();
      expect(code, proc.stderr()).toBe(0);
      return JSON.parse(proc.stdout()) as T;
    };
    await admin(['workspace', 'create', '--name', 'acme', '--owner', 'you@example.com']);
    const { token } = await admin<{ token: string }>(['token', 'create', '--workspace', 'acme', '--name', 'me', '--as', 'you@example.com']);
    await admin(['balance', 'add', '--workspace', 'acme', '--usd', '10', '--as', 'you@example.com']);

    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${url}/generate/image/vendor-b/model-b-1`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ prompt: 'a lighthouse', width: 512, height: 512 }),
      signal: AbortSignal.timeout(RUN_TIMEOUT_MS),
    });
    expect(created.status).toBe(200);
    const { job_id: id } = (await created.json()) as { job_id: string };
    let job: { status: string; result?: { urls: string[] } } = { status: 'queued' };
    for (const until = Date.now() + 120_000; !['completed', 'failed', 'cancelled'].includes(job.status) && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 250));
      job = (await (await fetch(`${url}/jobs/${id}`, { headers })).json()) as typeof job;
    }
    expect(job.status).toBe('completed');
    // Run by the worker process, stored in the bucket under the compose file's prefix.
    expect(workerProc.stderr()).toMatch(/"msg":"job completed"/);
    const listing = await (await fetch(`${bucket.endpoint}/mediagen?prefix=outputs/`)).text();
    expect(listing).toContain(`<Key>outputs/`);
    // The compose file's MEDIAGEN_PUBLIC_URL: the published port on the host, here the free one.
    const output = new URL(job.result!.urls[0]!);
    expect(output.origin).toBe('http://localhost:8080');
    const file = await fetch(new URL(output.pathname + output.search, url), { headers });
    expect(file.status).toBe(200);
    expect(isPng(Buffer.from(await file.arrayBuffer()))).toBe(true);
  });
});
