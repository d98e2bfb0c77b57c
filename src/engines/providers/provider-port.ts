/**
 * The contract between the provider engine (provider-engine.ts: templates, media inputs, polling,
 * retries, outputs, the stored upstream state) and one hosted provider's API (an adapter per
 * type: replicate, fal, openai, krea). An adapter speaks only its provider's HTTP: it builds the
 * requests its provider's documentation describes and maps the answers onto the few shapes below.
 * Everything a job needs beyond that (deadlines, backoff, cancel on abort, downloads, billing) is
 * the engine's, once for every provider.
 */

import type { ProviderSettings } from '../../config/provider-settings.js';

export { PROVIDER_TYPES } from '../../config/provider-settings.js';
export type { ProviderSettings, ProviderType } from '../../config/provider-settings.js';
import type { ProviderType } from '../../config/provider-settings.js';

/**
 * The provider's job, as stored with ours (`jobs.upstream`, via EngineContext.upstream) as soon
 * as the provider answered the submission: a restarted run resumes it instead of submitting again.
 */
export interface UpstreamHandle {
  /** The provider's id for the job: a Replicate prediction id, a fal request id, a krea job id. */
  readonly id: string;
  /** URLs the provider's answer gave for this job (fal's status_url, response_url, cancel_url). */
  readonly urls?: Readonly<Record<string, string>>;
}

/** The handle of a synchronous call: our job id, since the provider gives none. */
export const syncHandleId = (jobId: string): string => `sync-${jobId}`;

/** A provider's job status, mapped onto what the engine acts on. */
export type UpstreamStatus =
  | { readonly state: 'queued'; readonly raw: string }
  /** `sampling`: generation itself has started (not only setup); `progress` in [0, 1] where the provider reports it. */
  | { readonly state: 'running'; readonly raw: string; readonly sampling?: boolean; readonly progress?: number }
  /** `output`: the provider's answer, which the model's `outputs` paths are read from. */
  | { readonly state: 'succeeded'; readonly raw: string; readonly output: unknown; readonly usage?: UpstreamUsage }
  | { readonly state: 'failed'; readonly raw: string; readonly message: string; readonly usage?: UpstreamUsage }
  | { readonly state: 'cancelled'; readonly raw: string };

/**
 * What the provider reported it cost or used, kept for reconciling invoices (GET /jobs/{id}/details):
 * Replicate's `metrics.predict_time`, OpenAI's `usage` tokens, a krea upstream's `cost_usd`. Small, flat JSON.
 */
export type UpstreamUsage = Readonly<Record<string, number | string>>;

export interface SubmitRequest {
  /** The binding's `upstream.model`: `owner/name[:version]`, `fal-ai/flux/dev`, `gpt-image-1`, a krea path. */
  readonly model: string;
  /** The provider input, built from the template, media inputs already in a form the provider reads. */
  readonly input: Readonly<Record<string, unknown>>;
  /** Our job id: an idempotency key where the provider honours one (krea). */
  readonly jobId: string;
  /** Where the provider may call back (Replicate, fal), when `public_url` is set; else polling only. */
  readonly webhookUrl?: string;
}

/** What a submission gave: the handle to store, and the status the answer already told. */
export interface Submitted {
  readonly handle: UpstreamHandle;
  readonly status: UpstreamStatus;
}

/** A webhook whose signature checked out: the provider job it is about. Its body is never trusted further: the engine polls. */
export interface VerifiedWebhook {
  readonly upstreamId: string;
}

/** The one HTTP client adapters use: the provider's base URL, auth, timeout and metrics are applied by the engine's caller. */
export interface ProviderHttp {
  /**
   * Calls `pathOrUrl` (a path joined to the base URL, or an absolute URL the provider gave, which
   * must be on the base URL's origin or a host the adapter names as the provider's). Answers with
   * a status >= 400 throw UpstreamError (rejected for 4xx but 408/409/425/429, and for a 429
   * `insufficient_quota`; unavailable for those and 5xx), with the retry hints (`retry-after-ms`,
   * Retry-After, `x-should-retry`); so do network errors and timeouts (unavailable; `notSent` when
   * the connection never opened). A JSON answer larger than the cap or not JSON throws `malformed`.
   */
  json(method: string, pathOrUrl: string, body?: unknown, headers?: Readonly<Record<string, string>>): Promise<unknown>;
  /** A raw request for uploads (multipart or bytes); answers JSON as `json` does. */
  send(method: string, pathOrUrl: string, body: Uint8Array | FormData, headers?: Readonly<Record<string, string>>): Promise<unknown>;
}

export interface ProviderAdapter {
  readonly type: ProviderType;
  /** Where this provider's answer holds the files when the binding names no `outputs` (docs/providers.md). */
  readonly defaultOutputs: readonly string[];
  /**
   * Whether the answer to `submit` is final (OpenAI's synchronous call): then `status` is never
   * asked, and the handle is `syncHandleId(jobId)`.
   */
  readonly synchronous: boolean;
  submit(req: SubmitRequest): Promise<Submitted>;
  status(handle: UpstreamHandle): Promise<UpstreamStatus>;
  /** Asks the provider to stop the job; a job already ended there is not an error. */
  cancel(handle: UpstreamHandle): Promise<void>;
  /** Puts a file where the provider can read it, answering the URL to give it; absent when the provider has no file API. */
  upload?(bytes: Buffer, contentType: string, name: string): Promise<string>;
  /**
   * Checks a webhook's signature (Standard Webhooks for Replicate, ED25519 for fal): the provider
   * job it names, or undefined when the signature, timestamp or body does not check out.
   */
  verifyWebhook?(headers: Readonly<Record<string, string | undefined>>, rawBody: Buffer, nowMs: number): Promise<VerifiedWebhook | undefined>;
}

/**
 * Makes a type's adapter for one run (or one webhook check): `http` is bound to the run's signal
 * and knows the base URL and the key, so an adapter never touches the secret itself.
 */
export type AdapterFactory = (settings: ProviderSettings, http: ProviderHttp) => ProviderAdapter;
