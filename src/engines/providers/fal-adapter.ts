/**
 * fal's queue API (https://queue.fal.run), as fal documents it and its JavaScript client speaks it:
 * - Queue: https://docs.fal.ai/model-apis/model-endpoints/queue and
 *   https://docs.fal.ai/documentation/model-apis/inference/queue: `POST {base}/{endpoint id}` with
 *   the input as the JSON body answers `{request_id, response_url, status_url, cancel_url, ...}`;
 *   `GET status_url` answers `{status: IN_QUEUE | IN_PROGRESS | COMPLETED, queue_position, logs,
 *   metrics}`; `GET response_url` the model's answer (an error status with `detail` when the
 *   request failed: https://docs.fal.ai/documentation/model-apis/request-errors and
 *   https://fal.ai/docs/documentation/model-apis/errors); `PUT cancel_url` (answers
 *   CANCELLATION_REQUESTED, or ALREADY_COMPLETED / NOT_FOUND as a 4xx:
 *   https://fal.ai/docs/inference-api/queue/cancel). The status, response and cancel URLs use the
 *   app id without the endpoint's subpath (`fal-ai/flux` for `fal-ai/flux/dev`): the answer's URLs
 *   are used; without them they are built as fal-js does (libs/client/src/queue.ts and
 *   parseEndpointId in libs/client/src/utils.ts of fal-ai/fal-js: `owner/alias`, behind a
 *   `workflows/` or `comfy/` namespace when there is one; a legacy `123-alias` is `123/alias`, as ensureEndpointIdFormat reads it).
 *   fal has no FAILED status: a failed request goes COMPLETED, with `error` / `error_type` on the
 *   status (fal-ai/fal pull 1143, `final_status.error`) and its response URL answering a 4xx with
 *   `detail` (TanStack/ai pull 396, "fal.ai never returns a FAILED queue status").
 * - Auth: `Authorization: Key <key>` (createProviderHttp, type fal).
 * - Webhooks: the `fal_webhook` query parameter of the submission
 *   (https://docs.fal.ai/model-endpoints/webhooks); signatures: fal-webhook.ts.
 * - Storage: fal-js libs/client/src/storage.ts and fal's REST storage API:
 *   `POST {storage}/storage/upload/initiate?storage_type=fal-cdn-v3` with `{content_type,
 *   file_name}` answers `{upload_url, file_url}`; the bytes go by `PUT upload_url` (a presigned URL:
 *   sent without our key), and `file_url` is what the model is given.
 */
import { providerType } from '../../config/provider-types.js';
import type { AdapterFactory, ProviderSettings, UpstreamHandle, UpstreamStatus, UpstreamUsage } from './provider-port.js';
import { UpstreamError, cleanUpstreamMessage } from '../upstream/upstream-error.js';
import { errorText } from './provider-http.js';
import { FAL_DEFAULT_JWKS_URL, verifyFalWebhook } from './fal-webhook.js';

export { FAL_DEFAULT_JWKS_URL } from './fal-webhook.js';

const FAL = providerType('fal');
/** fal's queue API: what the JavaScript client calls (`queue` subdomain of fal.run). */
export const FAL_DEFAULT_BASE_URL = FAL.defaultBaseUrl;
/**
 * fal's REST API, where storage uploads start: `rest.fal.ai`, no longer `rest.alpha.fal.ai`, in
 * fal-js (libs/client/src/config.ts getRestApiUrl, since fal-ai/fal-js pull 198) and fal's Python
 * client (fal-ai/fal projects/fal_client/src/fal_client/client.py REST_URL). Its origin must be
 * among createProviderHttp's trustedOrigins.
 */
export const FAL_DEFAULT_STORAGE_URL = FAL.extraUrls.storage_url!.default;
/** Where fal's common answers hold files: images (FLUX and most image models), one image, video, audio. */
export const FAL_DEFAULT_OUTPUTS: readonly string[] = Object.freeze(['images[*].url', 'image.url', 'video.url', 'audio.url']);

const NAMESPACES = new Set(['workflows', 'comfy']);

/**
 * The queue base URL from a configured one (the type's rule, config/provider-types.ts): trailing
 * slashes dropped, and fal's synchronous host (`https://fal.run`, which has no queue and no
 * webhooks) replaced by `https://queue.fal.run`. Any other URL (a proxy, a fake) is kept as given.
 * fal's URLs have no `/v1`.
 */
export function falBaseUrl(configured?: string): string {
  return configured?.trim() ? FAL.baseUrl(configured) : FAL_DEFAULT_BASE_URL;
}

/** fal's legacy app id, `<numeric owner>-<alias>` (fal-js ensureEndpointIdFormat): the same app as `<owner>/<alias>`. */
const LEGACY_APP_ID_RE = /^([0-9]+)-([a-zA-Z0-9-]+)$/;

/**
 * An endpoint id as fal takes it, `owner/alias[/path...]`, each segment plain (no `..`, no query);
 * a legacy `123-alias` is rewritten `123/alias`, as fal-js's ensureEndpointIdFormat does.
 */
export function falEndpointId(model: string): string {
  const legacy = LEGACY_APP_ID_RE.exec(model);
  return legacy ? `${legacy[1]}/${legacy[2]}` : model;
}

function checkEndpointId(model: string): string[] {
  const parts = falEndpointId(model).split('/');
  const ok = parts.length >= 2 && parts.every((p) => /^[A-Za-z0-9_][A-Za-z0-9_.~-]*$/.test(p) && p !== '..');
  if (!ok || (NAMESPACES.has(parts[0]!) && parts.length < 3)) {
    throw new UpstreamError('rejected', `"${cleanUpstreamMessage(model)}" is not a fal endpoint id (owner/app[/path])`);
  }
  return parts;
}

/** The app id the queue's request URLs use: `owner/alias`, the endpoint's subpath dropped, a namespace kept (fal-js parseEndpointId). */
export function falAppId(model: string): string {
  const parts = checkEndpointId(model);
  return NAMESPACES.has(parts[0]!) ? parts.slice(0, 3).join('/') : parts.slice(0, 2).join('/');
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The usage a COMPLETED status reports: `metrics.inference_time` (seconds on the runner). */
function usageOf(status: Record<string, unknown>): UpstreamUsage | undefined {
  const t = record(status.metrics)?.inference_time;
  return typeof t === 'number' && Number.isFinite(t) ? { inference_time_s: t } : undefined;
}

export const falAdapter: AdapterFactory = (settings: ProviderSettings, http) => {
  const base = falBaseUrl(settings.baseUrl);
  const storage = (settings.storageUrl ?? FAL_DEFAULT_STORAGE_URL).replace(/\/+$/, '');
  const jwksUrl = settings.webhookJwksUrl ?? FAL_DEFAULT_JWKS_URL;
  const clean = (text: string) => cleanUpstreamMessage(text, settings.apiKey());

  /** The request's URLs: those the answer gave, else built from the app id as fal-js does. */
  function urlsFor(model: string, id: string, answer: Record<string, unknown>): Record<string, string> {
    const root = `${base}/${falAppId(model)}/requests/${encodeURIComponent(id)}`;
    return {
      status_url: str(answer.status_url) ?? `${root}/status`,
      response_url: str(answer.response_url) ?? root,
      cancel_url: str(answer.cancel_url) ?? `${root}/cancel`,
    };
  }

  function handleUrl(handle: UpstreamHandle, name: 'status_url' | 'response_url' | 'cancel_url'): string {
    const url = handle.urls?.[name];
    if (!url) throw new UpstreamError('malformed', `the stored fal request ${clean(handle.id)} has no ${name}`);
    return url;
  }

  async function completed(handle: UpstreamHandle, status: Record<string, unknown>): Promise<UpstreamStatus> {
    const usage = usageOf(status);
    const error = str(status.error);
    if (error) {
      const kind = str(status.error_type);
      return { state: 'failed', raw: 'COMPLETED', message: clean(kind ? `${error} (${kind})` : error), ...(usage ? { usage } : {}) };
    }
    let output: unknown;
    try {
      output = await http.json('GET', handleUrl(handle, 'response_url'));
    } catch (err) {
      // A request that failed on fal answers its response URL with a 4xx and fal's `detail` (422 for
      // the model's validation); 401/403 are about our key, not the request, and stay rejections.
      if (err instanceof UpstreamError && err.kind === 'rejected' && err.status !== 401 && err.status !== 403) return { state: 'failed', raw: 'COMPLETED', message: err.message, ...(usage ? { usage } : {}) };
      throw err;
    }
    if (!record(output)) throw new UpstreamError('malformed', 'fal answered a completed request with no result object');
    return { state: 'succeeded', raw: 'COMPLETED', output, ...(usage ? { usage } : {}) };
  }

  function mapStatus(raw: string, status: Record<string, unknown>): UpstreamStatus {
    switch (raw) {
      case 'IN_QUEUE':
        return { state: 'queued', raw };
      case 'IN_PROGRESS':
        // fal's runner has the request: generation itself. fal reports no progress figure.
        return { state: 'running', raw, sampling: true };
      // Not in fal's documented lifecycle, but named by some of its schemas: mapped rather than refused.
      case 'FAILED':
      case 'ERROR':
        return { state: 'failed', raw, message: clean(str(status.error) ?? str(status.detail) ?? 'fal failed the request') };
      case 'CANCELED':
      case 'CANCELLED':
        return { state: 'cancelled', raw };
      default:
        // A status fal has not documented: still going, as far as we can tell (polling stays safe;
        // the model's timeout_ms bounds it).
        return { state: 'running', raw };
    }
  }

  return {
    type: 'fal',
    defaultOutputs: FAL_DEFAULT_OUTPUTS,
    synchronous: false,

    async submit(req) {
      const endpoint = checkEndpointId(req.model).join('/');
      const query = req.webhookUrl ? `?fal_webhook=${encodeURIComponent(req.webhookUrl)}` : '';
      const answer = record(await http.json('POST', `${base}/${endpoint}${query}`, req.input));
      const id = str(answer?.request_id);
      if (!answer || !id) throw new UpstreamError('malformed', 'fal accepted the submission without a request_id');
      const handle: UpstreamHandle = { id, urls: urlsFor(endpoint, id, answer) };
      // The answer is IN_QUEUE as documented; anything else (even COMPLETED) is read by the first poll.
      const raw = str(answer.status) ?? 'IN_QUEUE';
      return { handle, status: raw === 'IN_QUEUE' || raw === 'COMPLETED' ? { state: 'queued', raw } : mapStatus(raw, answer) };
    },

    async status(handle) {
      const answer = record(await http.json('GET', handleUrl(handle, 'status_url')));
      const raw = str(answer?.status);
      if (!answer || !raw) throw new UpstreamError('malformed', 'fal answered a status request without a status');
      if (raw === 'COMPLETED') return completed(handle, answer);
      return mapStatus(raw, answer);
    },

    async cancel(handle) {
      try {
        await http.json('PUT', handleUrl(handle, 'cancel_url'));
      } catch (err) {
        // ALREADY_COMPLETED answers 400, an unknown (long gone) request 404: nothing left to stop.
        if (err instanceof UpstreamError && err.kind === 'rejected' && (err.status === 400 || err.status === 404)) return;
        throw err;
      }
    },

    async upload(bytes, contentType, name) {
      const initiated = record(await http.json('POST', `${storage}/storage/upload/initiate?storage_type=fal-cdn-v3`, { content_type: contentType, file_name: name }));
      const uploadUrl = str(initiated?.upload_url);
      const fileUrl = str(initiated?.file_url);
      if (!uploadUrl || !fileUrl || !/^https?:\/\//i.test(uploadUrl) || !/^https?:\/\//i.test(fileUrl)) {
        throw new UpstreamError('malformed', 'fal storage answered without an upload_url and a file_url');
      }
      // A presigned URL on fal's storage: plain fetch, so our key never goes with the bytes.
      let res: Response;
      try {
        res = await fetch(uploadUrl, { method: 'PUT', body: bytes, headers: { 'content-type': contentType, 'user-agent': 'mediagen' }, signal: AbortSignal.timeout(settings.requestTimeoutMs), redirect: 'error' });
      } catch (err) {
        const timedOut = (err as Error)?.name === 'TimeoutError';
        throw new UpstreamError('unavailable', timedOut ? `fal storage did not take the upload within ${settings.requestTimeoutMs} ms` : 'could not reach fal storage', { cause: err });
      }
      const text = await res.text().catch(() => '');
      if (res.status >= 400) {
        const kind = res.status >= 500 || res.status === 429 || res.status === 408 ? 'unavailable' : 'rejected';
        throw new UpstreamError(kind, clean(`fal storage refused the upload: ${res.status}: ${errorText(text)}`), { status: res.status });
      }
      return fileUrl;
    },

    async verifyWebhook(headers, rawBody, nowMs) {
      const id = await verifyFalWebhook(headers, rawBody, nowMs, jwksUrl, settings.requestTimeoutMs);
      return id === undefined ? undefined : { upstreamId: id };
    },
  };
};
