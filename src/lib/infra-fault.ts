/**
 * Infrastructure faults: failures of the machine or the database rather than of a job or a
 * request. A job that meets one is handed back to the queue instead of failed, and a request that
 * meets one answers 503 instead of 500. This module is the one place that decides what counts.
 */

/** What kind of fault, for the alert and for the client's one-line reason. */
export type InfraFaultKind =
  | 'disk_full'
  | 'read_only'
  | 'too_many_files'
  | 'io_error'
  | 'database_unreachable'
  | 'database_busy'
  | 'object_store_unreachable'
  | 'object_store_refused';

export interface InfraFault {
  readonly kind: InfraFaultKind;
  /** The errno, SQLite or SQLSTATE code (or `message` when only the text said so). */
  readonly code: string;
}

/** Node errno codes of the filesystem and process: anywhere in an error's cause chain. */
const ERRNO: Readonly<Record<string, InfraFaultKind>> = {
  ENOSPC: 'disk_full',
  EDQUOT: 'disk_full',
  EROFS: 'read_only',
  EMFILE: 'too_many_files',
  ENFILE: 'too_many_files',
  EIO: 'io_error',
};

/**
 * The codes an object store's errors carry (outputs/s3/ wraps every SDK failure that is not plain
 * absence in one of them). They count wherever they appear, engine errors included: an asset input
 * read from the bucket failing is the server's storage failing, not the job's input.
 */
export const OBJECT_STORE_UNREACHABLE = 'OBJECT_STORE_UNREACHABLE';
export const OBJECT_STORE_REFUSED = 'OBJECT_STORE_REFUSED';
const OBJECT_STORE: Readonly<Record<string, InfraFaultKind>> = {
  [OBJECT_STORE_UNREACHABLE]: 'object_store_unreachable',
  [OBJECT_STORE_REFUSED]: 'object_store_refused',
};

/** Connection errnos count only for errors that did not come from an engine (its input fetches). */
const CONNECTION_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** better-sqlite3's extended result codes, by prefix. SQLITE_BUSY means busy_timeout ran out. */
const SQLITE: readonly [string, InfraFaultKind][] = [
  ['SQLITE_FULL', 'disk_full'],
  ['SQLITE_IOERR', 'io_error'],
  ['SQLITE_READONLY', 'read_only'],
  ['SQLITE_CANTOPEN', 'io_error'],
  ['SQLITE_BUSY', 'database_busy'],
];

/**
 * The strerror texts of the same errnos, for errors that kept only a message (ffmpeg's stderr
 * wrapped by an engine). EIO's text is left out: ffmpeg says "Input/output error" of bad inputs.
 */
const TEXTS: readonly [RegExp, InfraFaultKind, string][] = [
  [/No space left on device/i, 'disk_full', 'ENOSPC'],
  [/Disk quota exceeded/i, 'disk_full', 'EDQUOT'],
  [/Read-only file system/i, 'read_only', 'EROFS'],
  [/Too many open files/i, 'too_many_files', 'EMFILE'],
];

/** pg's own words when the connection or pool is gone (no SQLSTATE: the server never answered). */
const PG_CONNECTION_TEXT =
  /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Cannot use a pool after calling end|is not currently accepting connections/i;

/**
 * SQLSTATE classes: 08 connection exception, 57P01-03 shutdowns, 53 insufficient resources, and
 * failures to connect at all: 3D000 (the database is gone), 28xxx (the credentials were refused).
 */
function sqlState(code: string): InfraFaultKind | undefined {
  if (!/^[0-9A-Z]{5}$/.test(code)) return undefined;
  if (code.startsWith('08') || code.startsWith('28') || code === '3D000') return 'database_unreachable';
  if (code === '57P01' || code === '57P02' || code === '57P03') return 'database_unreachable';
  if (code === '53100') return 'disk_full';
  if (code.startsWith('53')) return 'database_busy';
  return undefined;
}

/** The error and its causes (`cause`, an engine's internal `detail`, AggregateError's `errors`). */
function* chain(err: unknown, depth = 0): Generator<unknown> {
  if (err === null || err === undefined || depth > 8) return;
  yield err;
  if (typeof err !== 'object') return;
  const e = err as { cause?: unknown; detail?: unknown; errors?: unknown };
  if (e.cause !== undefined) yield* chain(e.cause, depth + 1);
  // An engine's detail is an Error or the text of one (a stack, a decoder's stderr).
  if (e.detail instanceof Error || typeof e.detail === 'string') yield* chain(e.detail, depth + 1);
  if (Array.isArray(e.errors)) for (const inner of e.errors.slice(0, 8)) yield* chain(inner, depth + 1);
}

const isEngineError = (e: unknown): boolean => e instanceof Error && e.name === 'EngineError';

/**
 * The infrastructure fault behind `err`, if any. Filesystem and SQLite codes count wherever they
 * appear in the chain; connection failures count only outside engine errors, because an engine's
 * input fetch meeting a refused connection is the input's fault, not the server's.
 */
export function infraFault(err: unknown): InfraFault | undefined {
  const all = [...chain(err)];
  const fromEngine = all.some(isEngineError);
  for (const e of all) {
    if (typeof e !== 'object' || e === null) continue;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      const errno = ERRNO[code] ?? OBJECT_STORE[code];
      if (errno) return { kind: errno, code };
      const lite = SQLITE.find(([prefix]) => code.startsWith(prefix));
      if (lite) return { kind: lite[1], code };
      if (!fromEngine && CONNECTION_ERRNO.has(code)) return { kind: 'database_unreachable', code };
      const state = fromEngine ? undefined : sqlState(code);
      if (state) return { kind: state, code };
    }
  }
  for (const e of all) {
    const message = e instanceof Error ? e.message : typeof e === 'string' ? e : '';
    for (const [re, kind, code] of TEXTS) if (re.test(message)) return { kind, code };
    if (!fromEngine && PG_CONNECTION_TEXT.test(message)) return { kind: 'database_unreachable', code: 'connection_lost' };
  }
  return undefined;
}

/** The reason as a client may read it: no path, no code, no internals. */
export function describeFault(kind: InfraFaultKind): string {
  switch (kind) {
    case 'disk_full':
      return 'its disk is full';
    case 'read_only':
      return 'its storage is read-only';
    case 'too_many_files':
      return 'it has run out of file handles';
    case 'io_error':
      return 'its storage is failing';
    case 'database_unreachable':
      return 'its database is unreachable';
    case 'database_busy':
      return 'its database is overloaded';
    case 'object_store_unreachable':
      return 'its object storage is unreachable';
    case 'object_store_refused':
      return 'its object storage refuses its requests';
  }
}

const SECOND = 1000;
/**
 * Waits before a job handed back for an infrastructure fault may run again: after fault n, the
 * job waits FAULT_RETRY_DELAYS_MS[n-1] (the last entry for any later fault). docs/config.md shows it.
 */
export const FAULT_RETRY_DELAYS_MS: readonly number[] = Object.freeze([5 * SECOND, 30 * SECOND, 120 * SECOND, 600 * SECOND]);

export function faultRetryDelayMs(faults: number): number {
  const i = Math.min(Math.max(1, Math.floor(faults)), FAULT_RETRY_DELAYS_MS.length) - 1;
  return FAULT_RETRY_DELAYS_MS[i]!;
}

/** The `alert` field of the log line every infrastructure fault writes; alerting rules match on it. */
export const INFRA_FAULT_ALERT = 'infrastructure_fault';
