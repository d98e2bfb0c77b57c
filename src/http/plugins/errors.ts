import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { infraFault } from '../../lib/infra-fault.js';
import { AppError, ERROR_CODES, invalid } from '../../services/errors.js';
import { storageUnavailable } from '../../services/readiness.js';
import type { ErrorCode } from '../../services/errors.js';
import { describeBodyErrors } from '../validation.js';
import { logFailure } from '../logging.js';

const codeForStatus = (status: number): ErrorCode =>
  (Object.keys(ERROR_CODES) as ErrorCode[]).find((c) => ERROR_CODES[c] === status) ?? 'invalid_request';

/**
 * Turns anything thrown into the catalogue's JSON shape; nothing leaves as HTML or a stack. A
 * store or disk failing under the request (disk full, read-only, lost database) is the server's
 * passing trouble, not a bug: 503 with Retry-After, saying what could not be done.
 */
export function toAppError(err: FastifyError | Error, bodyLimit?: number, method?: string): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError;
  if (fe.validation) return invalid(describeBodyErrors(fe.validation as never));
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', `the request body is larger than the server accepts${bodyLimit ? ` (${bodyLimit} bytes)` : ''}`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'send the request body as Content-Type: application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('the request body is empty; send a JSON object');
  }
  const fault = infraFault(err);
  if (fault) return storageUnavailable(fault.kind, method === 'POST' ? 'store new jobs' : 'answer this request');
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) return new AppError(codeForStatus(status), fe.message || 'bad request');
  return new AppError('internal', 'internal server error');
}

export function sendError(reply: FastifyReply, err: AppError): FastifyReply {
  // RFC 6750: a 401 names the scheme the client should use.
  if (err.status === 401) reply.header('www-authenticate', 'Bearer realm="mediagen"');
  // Refused before its body arrived (401, 413, 503...): the connection closes after the answer
  // rather than wait for a body nobody will read, which a slow client could trickle for minutes.
  if (reply.request?.raw && !reply.request.raw.complete) reply.header('connection', 'close');
  return reply.code(err.status).headers(err.headers).type('application/json; charset=utf-8').send(err.body());
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appErr = toAppError(err, request.routeOptions.bodyLimit, request.method);
    const fault = appErr.code === 'unavailable' && !(err instanceof AppError) ? infraFault(err) : undefined;
    // Operators' alert: the same stable field the job runner writes.
    if (fault) request.log.error({ alert: 'infrastructure_fault', errno: fault.code, kind: fault.kind }, 'infrastructure fault under a request');
    if (appErr.status >= 500) logFailure(request.log, err, 'request failed');
    return sendError(reply, appErr);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new AppError('route_not_found', `no route ${request.method} ${request.url.split('?')[0]!.slice(0, 200)}`)),
  );
}
