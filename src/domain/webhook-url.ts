import { isAbsoluteHttpUrl } from '../lib/urls.js';
import { invalid } from './error-catalogue.js';

/** The longest webhook URL a job may carry. */
export const WEBHOOK_URL_MAX = 2048;

/**
 * A job's webhook URL: an absolute http(s) URL (RFC 3986, with a host) of at most 2048
 * characters. `label` is what the caller's transport calls the option (HTTP: `X-Webhook-URL`),
 * so the message names what the client sent.
 */
export function checkWebhookUrl(url: string, label: string): void {
  if (url.length > WEBHOOK_URL_MAX) throw invalid(`${label} must be at most ${WEBHOOK_URL_MAX} characters`);
  if (!isAbsoluteHttpUrl(url)) throw invalid(`${label} must be an absolute http or https URL`);
}
