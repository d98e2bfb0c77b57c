import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, notFound } from '../../domain/error-catalogue.js';
import { HttpError } from '../error-status.js';
import { OUTPUTS_PATH, contentTypeOf, isOutputKey } from '../../outputs/output-store.js';
import type { ByteRange, OutputInfo, OutputStore } from '../../outputs/output-store.js';

/**
 * The bytes under an output URL never change, so a browser may reuse them for an hour without
 * asking. Shared caches may not keep them at all: the URL is the only credential, and the file
 * must stop being served once its job is deleted.
 */
const CACHE_CONTROL = 'private, max-age=3600, immutable';

type Params = { key: string; name: string };

/**
 * Strong, since a file is written once and a rewrite (a job reclaimed after a crash) changes its
 * mtime. The key and name keep two jobs' files of equal size and time from sharing a tag.
 */
function etagOf(key: string, name: string, file: OutputInfo): string {
  const digest = createHash('sha256').update(`${key}/${name}\n${file.size}\n${file.mtimeMs}`).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2): W/"x" matches "x". */
function noneMatch(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** RFC 9110 13.2.2: If-None-Match wins over If-Modified-Since; HTTP dates have whole seconds. */
function notModified(request: FastifyRequest, etag: string, mtimeMs: number): boolean {
  const inm = request.headers['if-none-match'];
  if (inm !== undefined) return noneMatch(inm, etag);
  const since = Date.parse(request.headers['if-modified-since'] ?? '');
  return !Number.isNaN(since) && Math.floor(mtimeMs / 1000) * 1000 <= since;
}

/**
 * The one range asked for; undefined sends the whole file. RFC 9110 14.2 lets a server ignore a
 * Range it does not handle, so a malformed header, another unit or several ranges get a plain 200
 * rather than a multipart body.
 */
function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!m) return undefined;
  const [, first = '', last = ''] = m;
  if (first === '') {
    if (last === '') return undefined;
    const suffix = Number(last);
    // A zero-length suffix, or any range of an empty file, selects no byte (RFC 9110 14.1.1).
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return undefined; // invalid, hence ignored
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}

/** If-Range takes a strong entity tag only; a date or a stale tag asks for the whole file. */
function requestedRange(request: FastifyRequest, etag: string, size: number): ByteRange | 'unsatisfiable' | undefined {
  const ifRange = request.headers['if-range'];
  // Node types an unlisted header as possibly repeated; a repeated If-Range matches nothing.
  if (ifRange !== undefined && (typeof ifRange !== 'string' || ifRange.trim() !== etag)) return undefined;
  return parseRange(request.headers.range, size);
}

/** Whether the file may be served: its key belongs to a job (not deleted, not failed) or a live asset. */
export type ServedFileCheck = (key: string, name: string) => Promise<boolean>;

/** Files of the output store served under one URL path, as long as their owner says so. */
export interface ServedFiles {
  /** The URL path the key and name follow: `/outputs`, `/assets/files`. */
  readonly path: string;
  readonly outputs: Pick<OutputStore, 'open' | 'stat' | 'presign'>;
  readonly served: ServedFileCheck;
  /** The 404's message. */
  readonly missing: string;
  /** Whether the key's files expired (retention): then 410 instead of 404. */
  readonly expired?: (key: string) => Promise<boolean>;
  /** Cache-Control of the answers; default: a browser may reuse the bytes for an hour. */
  readonly cacheControl?: string;
}

async function serve(files: ServedFiles, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply): Promise<FastifyReply> {
  const { outputs } = files;
  const cacheControl = files.cacheControl ?? CACHE_CONTROL;
  const { key, name } = request.params;
  // Asked only once the file is refused: a served file costs no extra query.
  const gone = async () =>
    isOutputKey(key) && (await files.expired?.(key))
      ? new DomainError('output_expired', 'this output file has expired: the server keeps the outputs of a finished job for a limited time')
      : notFound(files.missing);
  // GET opens before deciding, so the headers describe the very bytes streamed; HEAD reads nothing.
  const head = request.method === 'HEAD';
  const opened = head ? undefined : await outputs.open(key, name);
  const file = head ? await outputs.stat(key, name) : opened;
  if (!file) throw await gone();
  let streaming = false;
  try {
    // Files on disk are not proof enough: a removal may have failed, or a deleted job's worker may
    // still be writing. The job row decides, asked after the open, so a file opened before a
    // DELETE committed is served only if this check ran before the commit too.
    if (!(await files.served(key, name))) throw await gone();
    const etag = etagOf(key, name, file);
    const lastModified = new Date(file.mtimeMs).toUTCString();
    if (notModified(request, etag, file.mtimeMs)) {
      return reply.code(304).headers({ etag, 'last-modified': lastModified, 'cache-control': cacheControl }).send();
    }
    // `output_urls: presign`: the bucket sends the bytes (and honours Range); the redirect itself
    // must not outlive the signed URL in any cache. HEAD is answered here: a GET signature fits no HEAD.
    if (opened && outputs.presign) {
      return reply.code(302).headers({ location: await outputs.presign(key, name), 'cache-control': 'private, no-store' }).send();
    }
    // Range is defined for GET only (RFC 9110 14.2); HEAD answers as the whole-file GET would.
    const range = opened ? requestedRange(request, etag, file.size) : undefined;
    if (range === 'unsatisfiable') {
      throw new HttpError('range_not_satisfiable', `the requested range is outside the file's ${file.size} bytes`, {
        headers: { 'content-range': `bytes */${file.size}` },
      });
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? file.size - 1;
    reply.code(range ? 206 : 200).headers({
      'content-type': contentTypeOf(name),
      'content-length': String(end - start + 1),
      'accept-ranges': 'bytes',
      etag,
      'last-modified': lastModified,
      'cache-control': cacheControl,
      'x-content-type-options': 'nosniff',
      ...(range ? { 'content-range': `bytes ${start}-${end}/${file.size}` } : {}),
    });
    if (!opened || file.size === 0) return reply.send();
    // The stream owns the open file from here: it is released when the stream ends, fails, or is destroyed because the client left.
    const stream = opened.stream({ start, end });
    streaming = true;
    return reply.send(stream);
  } finally {
    if (opened && !streaming) await opened.close();
  }
}

/**
 * Stored files (job outputs, asset files): public, because the URL carries 192 random bits; kept
 * out of the OpenAPI document. Served only while their owner says so (`served`).
 */
export function registerServedFiles(app: FastifyInstance, files: ServedFiles): void {
  app.route<{ Params: Params }>({
    method: ['GET', 'HEAD'],
    url: `${files.path}/:key/:name`,
    config: { public: true },
    schema: { hide: true },
    handler: (request, reply) => serve(files, request, reply),
  });
}

/**
 * Job output files, served while the job that owns the key exists (and has not failed) and its
 * outputs have not expired; `expired` tells an expired key (410) from an unknown one (404).
 */
export function registerOutputRoutes(
  app: FastifyInstance,
  outputs: Pick<OutputStore, 'open' | 'stat' | 'presign'>,
  inUse: (key: string) => Promise<boolean>,
  expired?: (key: string) => Promise<boolean>,
): void {
  registerServedFiles(app, {
    path: OUTPUTS_PATH,
    outputs,
    served: (key) => inUse(key),
    missing: 'no such output file; it may have been deleted with its job',
    ...(expired ? { expired } : {}),
  });
}
