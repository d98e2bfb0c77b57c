import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/error-catalogue.js';
import { headerValues } from '../request/request-headers.js';

/** The Prometheus text of this process's metrics and its content type. */
export interface MetricsScrape {
  readonly contentType: string;
  readonly body: string;
}

/** `/metrics` on the API port: the operator's token (`metrics_token`) and the scrape. */
export interface MetricsEndpoint {
  readonly token: string;
  scrape(): Promise<MetricsScrape>;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * `GET /metrics` behind its own bearer token, out of the API document (an operator's endpoint,
 * not part of the API clients program against). The comparison takes the same time whatever the
 * token sent: both sides are hashed to equal lengths first. API tokens are not accepted here.
 */
export function registerMetricsRoute(app: FastifyInstance, endpoint: MetricsEndpoint): void {
  const expected = digest(endpoint.token);
  app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const sent = headerValues(request.raw.rawHeaders, 'authorization');
    const m = sent.length === 1 ? /^Bearer ([^\s]+)$/i.exec(sent[0]!) : null;
    if (!m || !timingSafeEqual(digest(m[1]!), expected)) {
      throw new DomainError('unauthenticated', 'send Authorization: Bearer <metrics token> (the server\'s metrics_token)');
    }
    const scrape = await endpoint.scrape();
    return reply.type(scrape.contentType).send(scrape.body);
  });
}
