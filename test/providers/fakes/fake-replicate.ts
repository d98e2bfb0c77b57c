/**
 * A fake Replicate HTTP API on loopback, written from Replicate's public reference and client:
 * - https://replicate.com/docs/reference/http: `POST /v1/predictions` (`version`, `input`,
 *   `webhook`, `webhook_events_filter`), `POST /v1/models/{owner}/{name}/predictions`,
 *   `GET /v1/predictions/{id}`, `POST /v1/predictions/{id}/cancel`; the prediction object (`id`,
 *   `status` starting | processing | succeeded | failed | canceled, `logs`, `output`, `error`,
 *   `metrics.predict_time`, `urls`); errors as `{detail}` (problem details); 401 without a token.
 * - replicate/replicate-javascript `lib/deployments.js` (`POST /v1/deployments/{owner}/{name}/predictions`
 *   with `input`, `webhook`, `webhook_events_filter`: a prediction like any other).
 * - replicate/replicate-javascript `lib/files.js` (`POST /v1/files`, multipart `content`; the answer's
 *   `urls.get`) and `lib/webhooks.js` (`GET /v1/webhooks/default/secret` → `{key}`).
 * - https://replicate.com/docs/topics/webhooks/verify-webhook: Standard Webhooks headers.
 * Outputs are a small real PNG (sharp) served, as Replicate's are from replicate.delivery (the
 * prediction examples of the HTTP reference), by a file host apart from the API
 * (`fileHost`, fake-file-host.ts); uploaded files stay on the API (`urls.get` of the files API).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { webhookHeaders } from '../../../src/lib/standard-webhooks.js';
import { startFakeFileHost } from './fake-file-host.js';
import type { FakeFileHost } from './fake-file-host.js';

export interface FakePrediction {
  readonly id: string;
  readonly model: string | undefined;
  readonly version: string | undefined;
  /** `owner/name` of the deployment it was created through, if any. */
  readonly deployment?: string | undefined;
  readonly input: Record<string, unknown>;
  readonly webhook: string | undefined;
  readonly filter: unknown;
  polls: number;
  held: boolean;
  status: string;
  error: string | undefined;
}

export interface FakeReplicate {
  readonly url: string;
  readonly token: string;
  readonly png: Buffer;
  /** Where outputs are served from (another address than the API's). */
  readonly fileHost: FakeFileHost;
  readonly requests: { method: string; path: string; headers: IncomingHttpHeaders; body: unknown }[];
  readonly predictions: Map<string, FakePrediction>;
  readonly files: Map<string, { bytes: Buffer; type: string; name: string }>;
  readonly cancels: string[];
  /** Webhooks sent: where, with what status answered. */
  readonly webhooks: { url: string; status: number }[];
  /** Statuses a prediction goes through, one per poll (the last stays). Default starting, processing, succeeded. */
  statuses: readonly string[];
  /** New predictions stay `processing` until `finish(id)`. */
  hold: boolean;
  /** While it answers true for a call, the API is down: 503, as Replicate's edge answers in an outage. */
  down: ((method: string, path: string) => boolean) | undefined;
  /** The succeeded prediction's `output` (default: the fake's PNG URL in an array). */
  output: unknown;
  submissions(): number;
  fail429(n: number, retryAfterSeconds: number): void;
  fail500(n: number): void;
  /** Finishes a held prediction now (succeeded, or failed with `error`) and sends its webhook. */
  finish(id: string, error?: string): Promise<number | undefined>;
  /** Rotates the account's webhook signing secret (as Replicate's dashboard can): webhooks are signed with the new one from now on. */
  rotateSecret(): void;
  /** The headers and body of a webhook for the prediction, forged on request. */
  webhookFor(id: string, forge?: 'signature' | 'stale' | 'other-secret'): { headers: Record<string, string>; body: string };
  close(): Promise<void>;
}

export async function startFakeReplicate(opts: { token?: string } = {}): Promise<FakeReplicate> {
  const token = opts.token ?? 'r8_fakeReplicateToken0123456789';
  let secret = `whsec_${randomBytes(32).toString('base64')}`;
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#d04080' } }).png().toBuffer();
  const faults: { status: number; headers?: Record<string, string> }[] = [];
  let made = 0;
  const fileHost = await startFakeFileHost();
  const output = fileHost.serve('/outputs/out-0.png', png);

  const view = (p: FakePrediction) => ({
    id: p.id,
    model: p.model ?? 'owner/model',
    version: p.version ?? 'official',
    input: p.input,
    logs: p.status === 'processing' ? 'Using seed: 1\n  0%|          | 0/28\n 50%|█████     | 14/28' : p.status === 'succeeded' ? '100%|██████████| 28/28' : '',
    output: p.status === 'succeeded' ? fake.output : null,
    error: p.status === 'failed' ? (p.error ?? 'the model failed') : null,
    status: p.status,
    created_at: new Date().toISOString(),
    metrics: p.status === 'succeeded' || p.status === 'failed' ? { predict_time: 2.31, total_time: 2.5 } : {},
    urls: { get: `${fake.url}/v1/predictions/${p.id}`, cancel: `${fake.url}/v1/predictions/${p.id}/cancel` },
  });

  const sendWebhook = async (p: FakePrediction): Promise<number | undefined> => {
    if (!p.webhook) return undefined;
    const { headers, body } = fake.webhookFor(p.id);
    const status = await fetch(p.webhook, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body }).then(
      (r) => r.status,
      () => 0,
    );
    fake.webhooks.push({ url: p.webhook, status });
    return status;
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks);
        const path = (req.url ?? '/').split('?')[0]!;
        const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
          res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
        };
        const file = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
        if (file && req.method === 'GET') {
          const f = fake.files.get(file[1]!);
          return f ? void res.writeHead(200, { 'content-type': f.type }).end(f.bytes) : send(404, { detail: 'Not found.' });
        }
        let body: unknown = null;
        if ((req.headers['content-type'] ?? '').startsWith('application/json') && raw.length) body = JSON.parse(raw.toString('utf8'));
        fake.requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
        if (req.headers.authorization !== `Bearer ${token}`) return send(401, { title: 'Unauthenticated', detail: 'You did not pass a valid authentication token', status: 401 });
        if (fake.down?.(req.method ?? 'GET', path)) return send(503, { detail: 'Service Unavailable', status: 503 });
        const fault = faults.shift();
        if (fault) return send(fault.status, { detail: fault.status === 429 ? 'Request was throttled.' : 'Internal server error', status: fault.status }, fault.headers);

        const create = (model: string | undefined, version: string | undefined, deployment?: string) => {
          const b = (body ?? {}) as { input?: Record<string, unknown>; webhook?: string; webhook_events_filter?: unknown };
          if (!b.input || typeof b.input !== 'object') return send(422, { detail: '- input: Required', status: 422 });
          const p: FakePrediction = { id: `pred${++made}${randomBytes(6).toString('hex')}`, model, version, deployment, input: b.input, webhook: b.webhook, filter: b.webhook_events_filter, polls: 0, held: fake.hold, status: 'starting', error: undefined };
          fake.predictions.set(p.id, p);
          return send(201, view(p));
        };
        const deployment = /^\/v1\/deployments\/([^/]+)\/([^/]+)\/predictions$/.exec(path);
        if (req.method === 'POST' && deployment) return create(undefined, undefined, `${deployment[1]}/${deployment[2]}`);
        const official = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(path);
        if (req.method === 'POST' && official) return create(`${official[1]}/${official[2]}`, undefined);
        if (req.method === 'POST' && path === '/v1/predictions') return create(undefined, (body as { version?: string } | null)?.version);
        const one = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(path);
        if (one) {
          const p = fake.predictions.get(one[1]!);
          if (!p) return send(404, { detail: 'Not found.', status: 404 });
          if (one[2] && req.method === 'POST') {
            fake.cancels.push(p.id);
            if (!['succeeded', 'failed', 'canceled'].includes(p.status)) p.status = 'canceled';
            return send(200, view(p));
          }
          if (req.method === 'GET') {
            if (!['succeeded', 'failed', 'canceled'].includes(p.status)) {
              if (p.held) p.status = 'processing';
              else p.status = fake.statuses[Math.min(p.polls, fake.statuses.length - 1)]!;
              p.polls++;
            }
            return send(200, view(p));
          }
        }
        if (req.method === 'POST' && path === '/v1/files') {
          const form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': req.headers['content-type']! }, body: raw }).formData();
          const content = form.get('content');
          if (!(content instanceof Blob)) return send(400, { detail: 'content is required' });
          const id = randomBytes(8).toString('hex');
          fake.files.set(id, { bytes: Buffer.from(await content.arrayBuffer()), type: content.type, name: (content as File).name });
          return send(201, { id, name: (content as File).name, content_type: content.type, size: content.size, urls: { get: `${fake.url}/v1/files/${id}/content` } });
        }
        if (req.method === 'GET' && path === '/v1/webhooks/default/secret') return send(200, { key: secret });
        return send(404, { detail: 'Not found.' });
      })().catch(() => res.destroy());
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake: FakeReplicate = {
    url,
    token,
    png,
    fileHost,
    requests: [],
    predictions: new Map(),
    files: new Map(),
    cancels: [],
    webhooks: [],
    statuses: ['starting', 'processing', 'succeeded'],
    hold: false,
    down: undefined,
    output: [output],
    submissions: () => made,
    fail429: (n, retryAfterSeconds) => faults.push(...Array.from({ length: n }, () => ({ status: 429, headers: { 'retry-after': String(retryAfterSeconds) } }))),
    fail500: (n) => faults.push(...Array.from({ length: n }, () => ({ status: 500 }))),
    async finish(id, error) {
      const p = fake.predictions.get(id)!;
      p.held = false;
      p.status = error === undefined ? 'succeeded' : 'failed';
      p.error = error;
      return sendWebhook(p);
    },
    rotateSecret() {
      secret = `whsec_${randomBytes(32).toString('base64')}`;
    },
    webhookFor(id, forge) {
      const p = fake.predictions.get(id)!;
      const body = JSON.stringify(view(p));
      const nowSec = Math.floor(Date.now() / 1000) - (forge === 'stale' ? 3600 : 0);
      const key = forge === 'other-secret' ? `whsec_${randomBytes(32).toString('base64')}` : secret;
      const headers: Record<string, string> = { ...webhookHeaders([key], `msg_${p.id}`, nowSec, body) };
      if (forge === 'signature') headers['webhook-signature'] = `v1,${randomBytes(32).toString('base64')}`;
      return { headers, body };
    },
    close: async () => {
      await fileHost.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  return fake;
}
