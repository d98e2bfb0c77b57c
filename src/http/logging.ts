import type { FastifyRequest } from 'fastify';

/**
 * What the request log keeps of a request. Query strings are dropped: a client may put a token or
 * a prompt there (`?access_token=...`), and the log must never hold either. Bodies and headers are
 * never logged.
 */
export const logSerializers = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: request.url.split('?')[0],
    remoteAddress: request.ip,
  }),
};
