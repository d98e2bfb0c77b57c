import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { BillingService } from '../../services/billing/billing.js';
import { UsagePage } from '../../services/billing/usage-view.js';
import { PageQuery, pageParams, toMicros } from '../request/query.js';
import { requireAuth } from '../plugins/auth.js';
import { errorResponses } from '../openapi/common-schemas.js';

/** GET /usage (spec 4.3): its parameters and shape are ours, recorded in docs/decisions.md. */
export function registerUsageRoutes(app: FastifyInstance, billing: BillingService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/usage',
    {
      schema: {
        operationId: 'listUsage',
        summary: "The workspace's completed metered jobs in a time window, newest first",
        description: 'Each completed job with what it was charged, in USD and compute units. Pages follow `next_cursor`.',
        tags: ['usage'],
        querystring: Type.Object({
          start: Type.Optional(Type.String({ format: 'date-time', description: 'Window start, inclusive (default: 30 days before end, or before now)', examples: ['2026-11-01T00:00:00Z'] })),
          end: Type.Optional(Type.String({ format: 'date-time', description: 'Window end, exclusive (default: now)', examples: ['2026-12-01T00:00:00Z'] })),
          ...PageQuery('jobs completed'),
        }),
        response: { 200: UsagePage, ...errorResponses(400) },
      },
    },
    // Whether start <= end is the billing service's rule (it also knows the defaults).
    (request) =>
      billing.usage(requireAuth(request.auth), {
        start: toMicros(request.query.start),
        end: toMicros(request.query.end),
        ...pageParams(request.query),
      }),
  );
}
