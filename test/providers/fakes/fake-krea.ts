/**
 * A fake "krea" upstream (the original API of /work/shared/spec.md, which mediagen itself serves) on
 * loopback, for what a real mediagen cannot be made to do on cue: every status of spec section 3,
 * 429/500/malformed answers, output URLs pointing anywhere. Shapes from the spec and this repo's
 * views: a created job `{job_id, type, status, created_at, completed_at: null, result: null}`
 * (src/services/common/job-view.ts CreatedJob), `GET /jobs/{id}` the Job (2.1) with `result.urls`
 * (2.2) and `error {code, message}` (2.3), `DELETE /jobs/{id}` 200 then 404, errors `{error: string}`
 * (section 7), `Idempotency-Key` replaying the first job (src/services/common/idempotency.ts).
 * Krea's own published API (https://docs.krea.ai/developers/job-lifecycle: "failed: Job failed due
 * to an error, details in result.error") puts a failed job's reason in `result.error`: `resultError`.
 * The end-to-end tests run the adapter against a real mediagen instead (krea-adapter.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

export interface FakeKreaRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

export interface FakeKreaOptions {
  /** The token accepted as `Authorization: Bearer <token>`. Default `mg-test-krea-token`. */
  readonly token?: string;
  /**
   * The statuses a job goes through, one per `GET /jobs/{id}` (the last one stays). Default
   * `['queued', 'processing', 'completed']`. A `failed` job carries `error`, a completed one `result`.
   */
  readonly statuses?: readonly string[];
  /** The completed job's `result.urls` (default: the fake's own PNG, `${url}/files/1.png`). */
  readonly outputUrls?: unknown;
  /** A failed job's `error` (default `{code: 'engine_failed', message: 'the engine failed unexpectedly'}`). */
  readonly error?: { code: string; message?: string };
  /** `cost_usd` put on a completed job (as a mediagen's job details would show). */
  readonly costUsd?: string;
  /** A failed job's reason as Krea's API gives it, in `result.error` (and no top-level `error`). */
  readonly resultError?: unknown;
}

interface FakeJob {
  readonly id: string;
  readonly type: string;
  polls: number;
  deleted: boolean;
}

export interface FakeKrea {
  readonly url: string;
  readonly token: string;
  readonly png: Buffer;
  readonly requests: FakeKreaRequest[];
  /** The statuses jobs go through, one per poll (options.statuses); replace it to move jobs on (e.g. hold in `processing`, then complete). */
  statuses: readonly string[];
  /** A completed job's `result.urls` (options.outputUrls; default the fake's own PNG); settable between polls. */
  outputUrls: unknown;
  /** When set, a failed job carries it as `result.error`, as Krea's published API does, instead of a top-level `error`. */
  resultError: unknown;
  /** POSTs that created a job (a replayed Idempotency-Key does not count). */
  submissions: number;
  /** Job ids DELETEd while they existed. */
  readonly cancels: string[];
  /** The next `n` calls (any route) answer 429 with `Retry-After`. */
  fail429(n?: number, retryAfterSeconds?: number): void;
  fail500(n?: number): void;
  /** The next `n` calls answer 200 with a body that is not JSON. */
  failMalformed(n?: number): void;
  /** The next call answers this JSON with 200. */
  answerNext(body: unknown): void;
  close(): Promise<void>;
}

type Scripted = { status: number; text: string; headers?: Record<string, string> };

export async function startFakeKrea(options: FakeKreaOptions = {}): Promise<FakeKrea> {
  const token = options.token ?? 'mg-test-krea-token';
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#20a060' } }).png().toBuffer();
  const jobs = new Map<string, FakeJob>();
  const byKey = new Map<string, string>();
  const script: Scripted[] = [];
  const created = new Date().toISOString();

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

  const view = (job: FakeJob) => {
    const status = fake.statuses[Math.min(job.polls, fake.statuses.length - 1)]!;
    const ended = ['completed', 'failed', 'cancelled'].includes(status);
    return {
      job_id: job.id,
      type: job.type,
      status,
      created_at: created,
      ...(ended ? { completed_at: new Date().toISOString() } : {}),
      ...(status === 'completed' ? { result: { urls: fake.outputUrls ?? [`${fake.url}/files/1.png`] }, ...(options.costUsd ? { cost_usd: options.costUsd } : {}) } : {}),
      ...(status === 'failed' && fake.resultError !== undefined ? { result: { error: fake.resultError } } : {}),
      ...(status === 'failed' && fake.resultError === undefined ? { error: options.error ?? { code: 'engine_failed', message: 'the engine failed unexpectedly' } } : {}),
    };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      let body: unknown;
      try {
        body = raw ? (JSON.parse(raw) as unknown) : undefined;
      } catch {
        body = raw;
      }
      fake.requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      if (req.method === 'GET' && path === '/files/1.png') return res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
      if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'missing or invalid API token' });
      const scripted = script.shift();
      if (scripted) return res.writeHead(scripted.status, { 'content-type': 'application/json', ...scripted.headers }).end(scripted.text);

      if (req.method === 'POST' && path.startsWith('/generate/')) {
        if (typeof body !== 'object' || body === null || typeof (body as { prompt?: unknown }).prompt !== 'string') {
          return send(res, 400, { error: "body must have required property 'prompt'" });
        }
        const key = req.headers['idempotency-key'];
        const again = typeof key === 'string' ? byKey.get(key) : undefined;
        const job = again ? jobs.get(again)! : { id: randomUUID(), type: path.slice('/generate/'.length), polls: 0, deleted: false };
        if (!again) {
          jobs.set(job.id, job);
          if (typeof key === 'string') byKey.set(key, job.id);
          fake.submissions++;
        }
        return send(res, 200, { job_id: job.id, type: job.type, status: 'queued', created_at: created, completed_at: null, result: null });
      }
      const m = /^\/jobs\/([^/]+)$/.exec(path);
      const job = m ? jobs.get(decodeURIComponent(m[1]!)) : undefined;
      if (!job || job.deleted) return send(res, 404, { error: `job '${m?.[1] ?? path}' not found` });
      if (req.method === 'GET') {
        const answer = view(job);
        job.polls++;
        return send(res, 200, answer);
      }
      if (req.method === 'DELETE') {
        job.deleted = true;
        fake.cancels.push(job.id);
        return send(res, 200, { job_id: job.id, deleted: true });
      }
      send(res, 404, { error: `no route ${req.method} ${path}` });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');

  const push = (n: number, s: Scripted) => {
    for (let i = 0; i < n; i++) script.push(s);
  };
  const fake: FakeKrea = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    png,
    statuses: options.statuses ?? ['queued', 'processing', 'completed'],
    outputUrls: options.outputUrls,
    resultError: options.resultError,
    requests: [],
    submissions: 0,
    cancels: [],
    fail429: (n = 1, s = 5) => push(n, { status: 429, text: JSON.stringify({ error: 'too many jobs: retry later' }), headers: { 'retry-after': String(s) } }),
    fail500: (n = 1) => push(n, { status: 500, text: JSON.stringify({ error: 'internal error' }) }),
    failMalformed: (n = 1) => push(n, { status: 200, text: '<html>gateway</html>', headers: { 'content-type': 'text/html' } }),
    answerNext: (b) => push(1, { status: 200, text: JSON.stringify(b) }),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return fake;
}
