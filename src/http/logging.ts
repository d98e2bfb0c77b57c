import type { FastifyBaseLogger, FastifyRequest } from 'fastify';

/**
 * What the request log keeps of a request. Query strings are dropped: a client may put a token or
 * a prompt there (`?access_token=...`), and the log must never hold either. Bodies and headers are
 * never logged. The key of an output URL is its only credential, so it is masked too.
 */
export const logSerializers = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: request.url.split('?')[0]!.replace(/^\/outputs\/[^/]+/, '/outputs/***'),
    remoteAddress: request.ip,
  }),
};

/**
 * Logs a failure by its message, code and stack only: driver errors can carry row values
 * (PostgreSQL's `detail`), which may hold a prompt.
 */
export function logFailure(log: FastifyBaseLogger, err: unknown, msg: string): void {
  const e = err as { message?: unknown; code?: unknown; stack?: unknown };
  log.error({ err: { message: String(e?.message ?? err), code: e?.code, stack: e?.stack } }, msg);
}
