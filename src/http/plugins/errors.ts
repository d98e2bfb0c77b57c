import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CODES, invalid } from '../../services/errors.js';
import type { ErrorCode } from '../../services/errors.js';
import { describeBodyErrors } from '../validation.js';

/** Deeper JSON than any request body needs is refused before it reaches JSON.parse or Ajv. */
export const MAX_JSON_DEPTH = 64;

function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91 /* { [ */) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw invalid('the request body is empty; send a JSON object');
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw invalid(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalid(`the request body is not valid JSON: ${(err as Error).message}`);
  }
}

const codeForStatus = (status: number): ErrorCode =>
  (Object.keys(ERROR_CODES) as ErrorCode[]).find((c) => ERROR_CODES[c] === status) ?? 'invalid_request';

/** Turns anything thrown into the catalogue's JSON shape; nothing leaves as HTML or a stack. */
export function toAppError(err: FastifyError | Error): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError;
  if (fe.validation) return invalid(describeBodyErrors(fe.validation as never));
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'the request body is larger than the server accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'send the request body as Content-Type: application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('the request body is empty; send a JSON object');
  }
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) return new AppError(codeForStatus(status), fe.message || 'bad request');
  return new AppError('internal', 'internal server error');
}

export function sendError(reply: FastifyReply, err: AppError): FastifyReply {
  return reply.code(err.status).headers(err.headers).type('application/json; charset=utf-8').send(err.body());
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appErr = toAppError(err);
    if (appErr.status >= 500) request.log.error({ err }, 'request failed');
    return sendError(reply, appErr);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new AppError('route_not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
