import { DomainError } from '../../domain/error-catalogue.js';

/**
 * The limits an upload is held to, and how their refusals read: one place for the words the
 * route, the service and the docs share.
 */

/** The longest description kept: a caption, not a document. */
export const MAX_DESCRIPTION_CHARS = 2000;
/** The client's file name, kept for display only, cut to this. */
export const MAX_FILENAME_CHARS = 255;

/** `1.5 MB`: sizes in messages, decimal units as file managers show them. */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} bytes`;
  let v = n;
  let unit = '';
  for (const u of ['kB', 'MB', 'GB', 'TB']) {
    v /= 1000;
    unit = u;
    if (v < 1000) break;
  }
  return `${Number(v.toFixed(v < 10 ? 2 : 1))} ${unit}`;
}

export const tooLargeUpload = (maxBytes: number) =>
  new DomainError('payload_too_large', `the file is larger than the ${formatBytes(maxBytes)} (${maxBytes} bytes) an asset may be`);

export const descriptionTooLong = () => new DomainError('invalid_request', `description is longer than ${MAX_DESCRIPTION_CHARS} characters`);

/** The quota refusal; `adding` is the file's size once known (undefined before it has arrived). */
export function quotaExceeded(used: number, quota: number, adding?: number): DomainError {
  const what = adding === undefined ? 'there is no room for another file' : `this ${formatBytes(adding)} file does not fit`;
  return new DomainError(
    'storage_quota_exceeded',
    `the workspace's assets use ${formatBytes(used)} of its ${formatBytes(quota)} quota; ${what}. Delete assets to make room`,
    { fields: { used_bytes: used, quota_bytes: quota } },
  );
}
