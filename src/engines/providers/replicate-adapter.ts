/**
 * Replicate's HTTP API, as its reference and its clients describe it:
 * - https://replicate.com/docs/reference/http (predictions: `POST /v1/predictions` with `version`,
 *   `POST /v1/models/{owner}/{name}/predictions` for official models, `GET /v1/predictions/{id}`,
 *   `POST /v1/predictions/{id}/cancel`; statuses starting, processing, succeeded, failed, canceled;
 *   `logs`, `output`, `error`, `metrics.predict_time`; `webhook` and `webhook_events_filter`)
 * - replicate/replicate-javascript `lib/deployments.js` (`deployments.predictions.create`:
 *   `POST /v1/deployments/{owner}/{name}/predictions` with `input`, `webhook`,
 *   `webhook_events_filter`; what it answers is a prediction, followed as any other), named in a
 *   binding as `deployment:owner/name`
 * - replicate/replicate-javascript `lib/files.js` (`POST /v1/files`, multipart `content` and
 *   `metadata` parts; the answer's `urls.get` is what a prediction takes as a file input) and
 *   `lib/webhooks.js` (`GET /v1/webhooks/default/secret` answers `{key: "whsec_..."}`)
 * - https://replicate.com/docs/topics/webhooks/verify-webhook (Standard Webhooks signatures; the
 *   secret is fetched once and cached, and fetched again when a delivery does not verify, since the
 *   account's secret can be rotated: at most once a minute, so forged deliveries cannot make us
 *   call Replicate at their pace).
 */
import { WEBHOOK_TOLERANCE_SEC, verifyWebhook as verifyStandardWebhook } from '../../lib/standard-webhooks.js';
import { isPlainObject } from '../../lib/plain-object.js';
import type { AdapterFactory, ProviderAdapter, ProviderHttp, UpstreamHandle, UpstreamStatus, UpstreamUsage } from './provider-port.js';
import { UpstreamError, cleanUpstreamMessage } from '../upstream/upstream-error.js';

export const REPLICATE_DEFAULT_OUTPUTS = ['output'] as const;

/** `owner/name` (an official model, run by name) or `owner/name:version`. */
const MODEL_RE = /^([A-Za-z0-9][A-Za-z0-9._-]*)\/([A-Za-z0-9][A-Za-z0-9._-]*)(?::([A-Za-z0-9]+))?$/;
/** `deployment:owner/name`: a deployment of the account, which pins its model, version and hardware. */
const DEPLOYMENT_RE = /^deployment:([A-Za-z0-9][A-Za-z0-9._-]*)\/([A-Za-z0-9][A-Za-z0-9._-]*)$/;
const ID_RE = /^[A-Za-z0-9_-]{1,100}$/;

/** The account's webhook signing secret, per base URL and key: fetched once, as Replicate's docs advise, and again after a rotation. */
interface CachedSecret {
  readonly key: Promise<string>;
  readonly fetchedAtMs: number;
}
const secrets = new Map<string, CachedSecret>();
/** A delivery the cached secret does not verify fetches the secret again, at most this often per account. */
export const SECRET_REFRESH_MIN_MS = 60_000;

/** The last tqdm-style percentage in the logs (` 45%|####      | 23/50`), as a fraction. */
export function progressOf(logs: unknown): number | undefined {
  if (typeof logs !== 'string') return undefined;
  const all = [...logs.slice(-4000).matchAll(/(\d{1,3})%\|/g)];
  const last = all.at(-1);
  if (!last) return undefined;
  const pct = Number(last[1]);
  return pct <= 100 ? pct / 100 : undefined;
}

function usageOf(p: Record<string, unknown>): UpstreamUsage | undefined {
  const metrics = isPlainObject(p.metrics) ? p.metrics : {};
  const usage = Object.fromEntries(['predict_time', 'total_time'].filter((k) => typeof metrics[k] === 'number').map((k) => [k, metrics[k] as number]));
  return Object.keys(usage).length > 0 ? usage : undefined;
}

/** A prediction as our status; an answer without an id or a known status is malformed. */
export function statusOf(p: unknown, secret?: string): UpstreamStatus {
  if (!isPlainObject(p) || typeof p.status !== 'string') throw new UpstreamError('malformed', 'the prediction has no status');
  const raw = p.status;
  switch (raw) {
    case 'starting':
      return { state: 'queued', raw };
    case 'processing': {
      const progress = progressOf(p.logs);
      return { state: 'running', raw, sampling: true, ...(progress === undefined ? {} : { progress }) };
    }
    case 'succeeded': {
      const usage = usageOf(p);
      return { state: 'succeeded', raw, output: p, ...(usage ? { usage } : {}) };
    }
    case 'failed': {
      const usage = usageOf(p);
      const message = typeof p.error === 'string' && p.error ? p.error : 'the prediction failed';
      return { state: 'failed', raw, message: cleanUpstreamMessage(message.split('\n')[0]!, secret), ...(usage ? { usage } : {}) };
    }
    case 'canceled':
    case 'aborted':
      return { state: 'cancelled', raw };
    default:
      // A status newer than this code: still running, as far as we can tell; the deadline bounds it.
      return { state: 'running', raw };
  }
}

function handleOf(p: unknown): UpstreamHandle {
  if (!isPlainObject(p) || typeof p.id !== 'string' || !ID_RE.test(p.id)) throw new UpstreamError('malformed', 'the prediction has no id');
  return { id: p.id };
}

export const replicateAdapter: AdapterFactory = (settings, http: ProviderHttp): ProviderAdapter => ({
  type: 'replicate',
  defaultOutputs: REPLICATE_DEFAULT_OUTPUTS,
  synchronous: false,

  async submit(req) {
    const hooks = req.webhookUrl ? { webhook: req.webhookUrl, webhook_events_filter: ['start', 'completed'] } : {};
    const answer = await http.json('POST', ...submission(req.model, { input: req.input, ...hooks }));
    return { handle: handleOf(answer), status: statusOf(answer, settings.apiKey()) };
  },

  async status(handle) {
    return statusOf(await http.json('GET', `/predictions/${encodeURIComponent(handle.id)}`), settings.apiKey());
  },

  async cancel(handle) {
    await http.json('POST', `/predictions/${encodeURIComponent(handle.id)}/cancel`).catch((err: unknown) => {
      // An ended or unknown prediction is nothing left to cancel.
      if (err instanceof UpstreamError && (err.status === 404 || err.status === 409 || err.status === 422)) return;
      throw err;
    });
  },

  async upload(bytes, contentType, name) {
    const form = new FormData();
    form.append('content', new Blob([new Uint8Array(bytes)], { type: contentType }), name);
    form.append('metadata', new Blob(['{}'], { type: 'application/json' }));
    const answer = await http.send('POST', '/files', form);
    const url = isPlainObject(answer) && isPlainObject(answer.urls) ? answer.urls.get : undefined;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new UpstreamError('malformed', 'the file upload answered no urls.get');
    return url;
  },

  async verifyWebhook(headers, rawBody, nowMs) {
    const account = `${settings.baseUrl}\n${settings.apiKey()}`;
    const body = rawBody.toString('utf8');
    const verifies = async (refresh: boolean) => verifyStandardWebhook(await secretOf(http, account, nowMs, refresh), headers, body, nowMs);
    // A delivery that is stale or unsigned fails whatever the secret: only a fresh signed one may mean a rotation.
    if (!(await verifies(false)) && !(fresh(headers, nowMs) && (await verifies(true)))) return undefined;
    try {
      return { upstreamId: handleOf(JSON.parse(body)).id };
    } catch {
      return undefined;
    }
  },
});

/**
 * The path and body of a submission: `deployment:owner/name` to the deployment, `owner/name:version`
 * to the version, `owner/name` to the official model; anything else is refused before any call.
 */
function submission(model: string, body: Record<string, unknown>): [string, Record<string, unknown>] {
  const d = DEPLOYMENT_RE.exec(model);
  if (d) return [`/deployments/${d[1]}/${d[2]}/predictions`, body];
  const m = MODEL_RE.exec(model);
  if (!m) throw new UpstreamError('rejected', `'${model.slice(0, 100)}' is not a Replicate model (owner/name, owner/name:version or deployment:owner/name)`);
  const [, owner, name, version] = m;
  return version ? ['/predictions', { version, ...body }] : [`/models/${owner}/${name}/predictions`, body];
}

/**
 * The account's signing secret: the cached one, or (none cached, or `refresh` and the last fetch a
 * minute old or more) fetched from Replicate. A failed fetch is forgotten, so the next delivery
 * tries again; a failed refresh keeps the secret it meant to replace.
 */
function secretOf(http: ProviderHttp, account: string, nowMs: number, refresh: boolean): Promise<string> {
  const cached = secrets.get(account);
  if (cached && !(refresh && Math.abs(nowMs - cached.fetchedAtMs) >= SECRET_REFRESH_MIN_MS)) return cached.key;
  const entry: CachedSecret = {
    fetchedAtMs: nowMs,
    key: http.json('GET', '/webhooks/default/secret').then((a) => {
      if (!isPlainObject(a) || typeof a.key !== 'string') throw new UpstreamError('malformed', 'the webhook secret answer has no key');
      return a.key;
    }),
  };
  secrets.set(account, entry);
  entry.key.catch(() => {
    if (secrets.get(account) !== entry) return;
    if (cached) secrets.set(account, { key: cached.key, fetchedAtMs: nowMs });
    else secrets.delete(account);
  });
  return entry.key;
}

/** Whether a delivery carries a signature and a timestamp within the tolerance. */
function fresh(headers: Readonly<Record<string, string | undefined>>, nowMs: number): boolean {
  const ts = headers['webhook-timestamp'];
  return !!headers['webhook-signature'] && !!ts && /^\d{1,12}$/.test(ts) && Math.abs(nowMs / 1000 - Number(ts)) <= WEBHOOK_TOLERANCE_SEC;
}

/** Forgets cached webhook secrets (tests rotate them). */
export function clearReplicateSecrets(): void {
  secrets.clear();
}
