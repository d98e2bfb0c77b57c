import { S3Client } from '@aws-sdk/client-s3';
import type { OutputStoreConfig } from '../../config/config.js';
import { OBJECT_STORE_REFUSED, OBJECT_STORE_UNREACHABLE } from '../../lib/infra-fault.js';

export type S3StoreConfig = Extract<OutputStoreConfig, { kind: 's3' }>;

/** A connection that is not up in this long counts as a failure (the SDK then retries it). */
const CONNECT_TIMEOUT_MS = 5000;
/** A socket silent this long (a hung service) fails the request instead of holding a run forever. */
const SOCKET_IDLE_TIMEOUT_MS = 60_000;

/**
 * The AWS SDK warns once per process, on the first client, that releases after January 2027 will
 * need Node 22. The project supports Node 20 on purpose (package.json `engines`), so operators
 * would read a warning they cannot act on in every log. This environment variable is the SDK's
 * documented switch (@aws-sdk/core emitWarningIfUnsupportedVersion); an operator's own value wins.
 */
const NODE_WARNING_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

/**
 * The one S3 client of a store. Checksums only when an operation requires them: the default
 * aws-chunked uploads with trailing checksums are not understood by many S3-compatible services
 * (s3rver, older MinIO, Ceph). Credentials left undefined use the SDK's default chain
 * (AWS_ACCESS_KEY_ID, profiles, web identity, instance roles).
 */
export function createS3Client(config: S3StoreConfig): S3Client {
  process.env[NODE_WARNING_SWITCH] ??= 'true';
  return new S3Client({
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    region: config.region ?? 'us-east-1',
    forcePathStyle: config.forcePathStyle,
    ...(config.credentials ? { credentials: { ...config.credentials } } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: SOCKET_IDLE_TIMEOUT_MS },
  });
}

/** What an SDK error carries that the store looks at; everything else (its message) is left behind. */
interface SdkError {
  readonly name?: string;
  readonly code?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
  readonly $retryable?: unknown;
}

const statusOf = (err: unknown): number | undefined => (err as SdkError | undefined)?.$metadata?.httpStatusCode;

/** A missing object or bucket key: plain absence, not a fault. */
export function isNotFound(err: unknown): boolean {
  const name = (err as SdkError | undefined)?.name;
  return statusOf(err) === 404 && name !== 'NoSuchBucket';
}

/** The object changed since it was opened (If-Match failed). */
export function isChanged(err: unknown): boolean {
  return statusOf(err) === 412 || (err as SdkError | undefined)?.name === 'PreconditionFailed';
}

const isLocalFileError = (err: unknown): boolean => typeof (err as NodeJS.ErrnoException | undefined)?.path === 'string' && (err as NodeJS.ErrnoException).syscall !== undefined;

/** Throttling names S3 and its look-alikes answer with; they are the service being busy. */
const THROTTLED = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'RequestTimeout', 'RequestTimeTooSkewed', 'ServiceUnavailable', 'InternalError']);

/**
 * An S3 failure as the store throws it: a code infra-fault.ts counts as an infrastructure fault
 * (a job meeting it is handed back, a request answers 503), and a message that names the
 * operation and what failed, never the bucket, a key or the endpoint. The SDK error is not kept as
 * the cause: its message and fields can name all three, and errors are logged whole.
 */
export class ObjectStoreError extends Error {
  override readonly name = 'ObjectStoreError';
  readonly code: string;
  /** The HTTP status the service answered, if it answered. */
  readonly status: number | undefined;

  constructor(operation: string, err: unknown) {
    const e = (err ?? {}) as SdkError;
    const status = statusOf(err);
    // A network error has an errno code (ECONNREFUSED, ETIMEDOUT) or a TimeoutError/AbortError name.
    const what = typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) ? e.code : typeof e.name === 'string' ? e.name.replace(/[^A-Za-z0-9_]/g, '').slice(0, 40) : 'error';
    const reachable = status !== undefined && status < 500 && !THROTTLED.has(e.name ?? '') && status !== 429;
    super(`object store ${operation} failed: ${what}${status !== undefined ? ` (HTTP ${status})` : ''}`);
    this.code = reachable ? OBJECT_STORE_REFUSED : OBJECT_STORE_UNREACHABLE;
    this.status = status;
  }
}

/**
 * Runs one S3 call. Absence (404) answers `absent`; every other failure becomes an ObjectStoreError:
 * network errors, timeouts, 5xx and throttling as the store unreachable, anything else the
 * service refused (403, a missing bucket, a bad signature) as the store refusing.
 */
export async function call<T, A = never>(operation: string, send: () => Promise<T>, absent?: () => A): Promise<T | A> {
  try {
    return await send();
  } catch (err) {
    if (absent && isNotFound(err)) return absent();
    // The local file an upload reads (ENOENT, EIO): the disk's fault as infra-fault.ts sees it, not the bucket's.
    if (isLocalFileError(err)) throw err;
    throw new ObjectStoreError(operation, err);
  }
}
