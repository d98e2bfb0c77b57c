/**
 * Decoding of `data:[<mediatype>][;base64],<data>` URIs (RFC 2397), which clients may send in place
 * of an input URL. Strict on purpose: a malformed URI is a client mistake to report, not something
 * to guess at, so bad percent escapes, bad base64 and bad media types are errors rather than being
 * skipped the way Buffer.from(s, 'base64') would skip them.
 */

export type DataUriErrorReason = 'malformed' | 'too_large';

export class DataUriError extends Error {
  override readonly name = 'DataUriError';

  constructor(
    readonly reason: DataUriErrorReason,
    message: string,
  ) {
    super(message);
  }
}

export interface DecodedDataUri {
  /** Lower-cased `type/subtype`, without parameters; `text/plain` when the URI names none. */
  readonly mediaType: string;
  readonly data: Buffer;
}

export interface DecodeDataUriOptions {
  /** Largest decoded size accepted; a URI certainly larger is refused before it is decoded. */
  readonly maxBytes?: number;
}

const MIB = 1024 * 1024;

/** `52428800` as `50 MiB`, for messages. */
export function formatBytes(n: number): string {
  if (n >= MIB) return `${Number((n / MIB).toFixed(1))} MiB`;
  if (n >= 1024) return `${Number((n / 1024).toFixed(1))} KiB`;
  return `${n} bytes`;
}

// RFC 7230 token characters.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}$`);
const PARAMETER = new RegExp(`^${TOKEN}=(?:${TOKEN}|"(?:[^"\\\\]|\\\\.)*")$`);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function malformed(why: string): DataUriError {
  return new DataUriError('malformed', `data: URI is malformed: ${why}`);
}

function tooLarge(maxBytes: number): DataUriError {
  return new DataUriError('too_large', `data: URI is larger than ${formatBytes(maxBytes)}`);
}

/** %XX escapes to bytes; anything else is taken as its UTF-8 bytes, as WHATWG fetch does. */
function percentDecode(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b !== 0x25) {
      out[n++] = b;
      continue;
    }
    const hex = bytes.toString('latin1', i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw malformed(`bad percent escape at offset ${i}`);
    out[n++] = parseInt(hex, 16);
    i += 2;
  }
  return out.subarray(0, n);
}

function parseMediaType(header: string): string {
  if (header === '') return 'text/plain';
  const [essence, ...params] = header.split(';');
  const type = essence!.trim();
  if (!MEDIA_TYPE.test(type)) throw malformed(`bad media type "${type.slice(0, 64)}"`);
  for (const p of params) {
    if (!PARAMETER.test(p.trim())) throw malformed(`bad media type parameter "${p.trim().slice(0, 64)}"`);
  }
  return type.toLowerCase();
}

function decodeBase64(payload: string): Buffer {
  // Some clients percent-encode '+', '/' and '='; nothing else may be escaped here.
  const text = payload.includes('%') ? percentDecode(payload).toString('latin1') : payload;
  if (!BASE64.test(text)) throw malformed('the base64 data contains characters outside the base64 alphabet');
  const padded = text.endsWith('=');
  if ((padded && text.length % 4 !== 0) || (!padded && text.length % 4 === 1)) {
    throw malformed('the base64 data has a wrong length');
  }
  return Buffer.from(text, 'base64');
}

/**
 * Decodes a data: URI to its media type and bytes. Throws a DataUriError with reason `malformed`
 * (the message says what is wrong, never echoing the data) or `too_large`.
 */
export function decodeDataUri(uri: string, options: DecodeDataUriOptions = {}): DecodedDataUri {
  const maxBytes = options.maxBytes ?? Infinity;
  if (!/^data:/i.test(uri)) throw malformed('it does not start with "data:"');
  const comma = uri.indexOf(',');
  if (comma < 0) throw malformed('no comma separates the media type from the data');
  const header = uri.slice(5, comma);
  const payload = uri.slice(comma + 1);

  const parts = header.split(';');
  const base64 = parts.length > 1 && parts.at(-1)!.trim().toLowerCase() === 'base64';
  const mediaType = parseMediaType((base64 ? parts.slice(0, -1) : parts).join(';').trim());

  // A lower bound of the decoded size (an escape is 3 characters for 1 byte), so a URI that is
  // certainly too large is refused before decoding.
  const atLeast = base64 && !payload.includes('%') ? Math.floor((payload.length * 3) / 4) - 2 : Math.ceil(payload.length / 3);
  if (atLeast > maxBytes) throw tooLarge(maxBytes);
  const data = base64 ? decodeBase64(payload) : percentDecode(payload);
  if (data.length > maxBytes) throw tooLarge(maxBytes);
  return { mediaType, data };
}
