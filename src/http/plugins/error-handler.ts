import { lingerAfterAnswer } from '../lingering-close.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { INFRA_FAULT_ALERT, infraFault } from '../../lib/infra-fault.js';
import type { InfraFault } from '../../lib/infra-fault.js';
import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { storageUnavailable } from '../../services/upkeep/readiness.js';
import { bodyOf, codeForStatus, headersOf, statusOf } from '../error-status.js';
import { logFailure } from '../logging.js';
import { whatPostStores } from './storage-guard.js';

/**
 * Turns anything thrown into the catalogue's JSON shape; nothing leaves as HTML or a stack. A
 * store or disk failing under the request (disk full, read-only, lost database) is the server's
 * passing trouble, not a bug: 503 with Retry-After, saying what could not be done.
 */
export function toDomainError(
  err: FastifyError | Error,
  bodyLimit?: number,
  method?: string,
  /** The route's `stores` (storage-guard.ts): what a refused POST would have stored. */
  stores?: string,
  fault: InfraFault | undefined = err instanceof DomainError ? undefined : infraFault(err),
): DomainError {
  if (err instanceof DomainError) return err;
  const fe = err as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('payload_too_large', `the request body is larger than the server accepts${bodyLimit ? ` (${bodyLimit} bytes)` : ''}`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError('unsupported_media_type', 'send the request body as Content-Type: application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('the request body is empty; send a JSON object');
  }
  if (fault) return storageUnavailable(fault.kind, method === 'POST' ? whatPostStores(stores) : 'answer this request');
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) return new DomainError(codeForStatus(status), fe.message || 'bad request');
  return new DomainError('internal', 'internal server error');
}

export function sendError(reply: FastifyReply, err: DomainError): FastifyReply {
  const status = statusOf(err);
  // RFC 6750: a 401 names the scheme the client should use.
  if (status === 401) reply.header('www-authenticate', 'Bearer realm="mediagen"');
  // Refused before its body arrived (401, 413, 503...): the connection closes after the answer
  // rather than wait for a body nobody will read, which a slow client could trickle for minutes;
  // it lingers first, within bounds, so a client still sending reads the answer (lingering-close.ts).
  if (reply.request?.raw && !reply.request.raw.complete) {
    reply.header('connection', 'close');
    lingerAfterAnswer(reply.request.raw);
  }
  return reply.code(status).headers(headersOf(err)).type('application/json; charset=utf-8').send(bodyOf(err));
}

/** What the not-found answer may add: the nearest real route to a mistyped one (`; did you mean …?`). */
export interface NotFoundHints {
  suggest?(method: string, path: string): string | undefined;
}

export function registerErrorHandling(app: FastifyInstance, hints: NotFoundHints = {}): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const fault = err instanceof DomainError ? undefined : infraFault(err);
    const appErr = toDomainError(err, request.routeOptions.bodyLimit, request.method, request.routeOptions.config.stores, fault);
    // Operators' alert: the same stable field the job runner writes.
    if (fault) request.log.error({ alert: INFRA_FAULT_ALERT, errno: fault.code, kind: fault.kind }, 'infrastructure fault under a request');
    if (statusOf(appErr) >= 500) logFailure(request.log, err, 'request failed');
    return sendError(reply, appErr);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!.slice(0, 200);
    const near = hints.suggest?.(request.method, path);
    return sendError(reply, new DomainError('route_not_found', `no route ${request.method} ${path}${near ? `; did you mean ${near}?` : ''}`));
  });
}
