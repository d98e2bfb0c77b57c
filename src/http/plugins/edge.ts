import { randomUUID } from 'node:crypto';
import { LogController } from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import { DomainError, invalid, notFound } from '../../domain/error-catalogue.js';
import type { IdentityService } from '../../services/identity/identity.js';
import { headerValues } from '../request/request-headers.js';
import { HttpError, bodyOf, statusOf } from '../error-status.js';
import { sendError, toDomainError } from './error-handler.js';
import { logFailure } from '../logging.js';

/**
 * The server options that shape what happens before a request reaches a route: requests that
 * Node or the router cannot take still get a JSON error, and every request gets an id.
 */
export function edgeOptions(identity: IdentityService): Partial<FastifyServerOptions> {
  return {
    // A path that is not valid percent-encoding matches no route: after the usual authentication
    // it is "not found", like a malformed job id, and its text is not echoed back.
    frameworkErrors: (_err, request, reply) => {
      // Answered before the edge hook runs: the request id is set here.
      void reply.header('x-request-id', request.id);
      const send = (err: DomainError) => sendError(reply as unknown as FastifyReply, err);
      identity
        .authenticate(headerValues(request.raw.rawHeaders, 'authorization'))
        .then(
          () => send(notFound('not found: the URL path is not valid percent-encoding')),
          (err: Error) => {
            const appErr = toDomainError(err);
            if (statusOf(appErr) >= 500) logFailure(request.log, err, 'request failed');
            return send(appErr);
          },
        )
        .catch((err: unknown) => logFailure(request.log, err, 'could not answer a malformed URL'));
    },
    // Requests Node's HTTP parser refuses, and requests too slow to arrive, never reach Fastify
    // (or are taken from it); they still get a JSON error, and the connection is closed.
    clientErrorHandler: function (this: FastifyInstance, err, socket) {
      const code = (err as NodeJS.ErrnoException).code;
      // Nothing can be said on a dead socket, or after a response has begun on it.
      const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
      if (code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) return socket.destroy();
      const { error, reason } = clientError(code);
      // Fastify binds this handler to the instance; a cut slow client is worth a line in the log.
      if (statusOf(error) === 408) this.log.info({ remoteAddress: socket.remoteAddress }, 'request not received in time; connection closed');
      const body = JSON.stringify(bodyOf(error));
      // A slow client may still be sending: once the answer is flushed the socket is destroyed,
      // not half-closed, so the client cannot keep it open by trickling more bytes.
      socket.end(
        `HTTP/1.1 ${statusOf(error)} ${reason}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`,
        () => socket.destroy(),
      );
    },
    // Long ids reach the route (and authentication) and are then simply not found.
    routerOptions: { maxParamLength: 1000 },
    // Every response names its request, so a user's report can be found in the log: the client's
    // X-Request-Id when well-formed (a proxy's or the caller's own), else a fresh UUID.
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    // Request log lines carry it under the same name as the worker's lines about the job it created.
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    // Fastify's own 503 while closing has its own body shape; registerEdgeHooks uses the catalogue.
    return503OnClosing: false,
  };
}

/** An X-Request-Id worth keeping: 1 to 128 characters a log or a header can carry as they are. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's id: X-Request-Id as sent when well-formed, else a new UUID. Sent twice, Node joins
 * the values with ", ", which is not well-formed: a new one.
 */
export function requestIdFrom(sent: string | string[] | undefined): string {
  return typeof sent === 'string' && REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** The catalogue error and HTTP reason phrase for an error Node reports before routing. */
function clientError(code: string | undefined): { error: DomainError; reason: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { error: new DomainError('headers_too_large', 'the request headers are too large'), reason: 'Request Header Fields Too Large' };
  }
  // The headers or the whole request did not arrive within headers_timeout_ms / request_timeout_ms.
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { error: new DomainError('request_timeout', 'the request was not received in time; the connection is closed'), reason: 'Request Timeout' };
  }
  return { error: invalid('malformed HTTP request'), reason: 'Bad Request' };
}

export function registerEdgeHooks(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Job states change under the same URL; no cache between client and server may keep one.
    reply.header('cache-control', 'no-store');
    if (closing) {
      // Answered, not thrown: a refusal while the server drains is expected, not a failure to log as one.
      return sendError(
        reply,
        new HttpError('unavailable', 'the server is shutting down; retry shortly', {
          retryAfterSeconds: 1,
          headers: { connection: 'close' },
        }),
      );
    }
  });
}
