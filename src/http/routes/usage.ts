import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { BillingService, UsageQuery } from '../../services/billing.js';
import { PAGE_LIMIT, parseDateTime, parseLimit, rejectUnknown } from '../query.js';
import type { RawQuery } from '../query.js';
import { requireAuth } from '../plugins/auth.js';
import { errorResponses } from '../schemas.js';

const UsageItem = Type.Object(
  {
    job_id: Type.String({ format: 'uuid' }),
    type: Type.String({ description: 'The job type (model path)' }),
    completed_at: Type.String({ format: 'date-time' }),
    cost_usd: Type.String({ description: 'What the job was charged, in USD with six decimal places', pattern: '^\\d+\\.\\d{6}$' }),
    compute_units: Type.Number({ description: 'The charge in compute units: 1 compute unit = $0.01' }),
  },
  { additionalProperties: false },
);

const UsagePage = Type.Object({
  items: Type.Array(UsageItem),
  next_cursor: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

function parseUsageQuery(query: RawQuery): UsageQuery {
  rejectUnknown(query, ['start', 'end', 'limit', 'cursor']);
  // Whether start <= end is the billing service's rule (it also knows the defaults).
  return { start: parseDateTime(query, 'start'), end: parseDateTime(query, 'end'), before: parseDateTime(query, 'cursor'), limit: parseLimit(query) };
}

/** GET /usage (spec 4.3): its parameters and shape are ours, recorded in docs/decisions.md. */
export function registerUsageRoutes(app: FastifyInstance, billing: BillingService): void {
  app.get(
    '/usage',
    {
      schema: {
        operationId: 'listUsage',
        summary: "The workspace's completed metered jobs in a time window, newest first",
        tags: ['usage'],
        querystring: Type.Object({
          start: Type.Optional(Type.String({ format: 'date-time', description: 'Window start, inclusive (default: 30 days before end, or before now)' })),
          end: Type.Optional(Type.String({ format: 'date-time', description: 'Window end, exclusive (default: now)' })),
          limit: Type.Optional(Type.Integer({ minimum: PAGE_LIMIT.min, maximum: PAGE_LIMIT.max, default: PAGE_LIMIT.default })),
          cursor: Type.Optional(Type.String({ format: 'date-time', description: 'Only jobs completed before this time: the previous page\'s next_cursor' })),
        }),
        response: { 200: UsagePage, ...errorResponses(400, 401, 403) },
      },
    },
    (request) => billing.usage(requireAuth(request.auth), parseUsageQuery(request.query as RawQuery)),
  );
}
