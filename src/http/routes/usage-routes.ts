import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { BillingService } from '../../services/billing/billing.js';
import { USAGE_SUMMARY_MAX_DAYS } from '../../services/billing/billing.js';
import { USAGE_GROUPINGS, UsagePage, UsageSummary } from '../../services/billing/usage-view.js';
import type { UsageGrouping } from '../../services/billing/usage-view.js';
import { StringEnum } from '../../models/schema-kit.js';
import { PageQuery, UTC_OFFSET_PATTERN, pageParams, parseUtcOffset, toMicros } from '../request/query.js';
import { requireAuth } from '../plugins/auth.js';
import { errorResponses } from '../openapi/common-schemas.js';

const Window = {
  start: Type.Optional(Type.String({ format: 'date-time', description: 'Window start, inclusive (default: 30 days before end, or before now)', examples: ['2026-11-01T00:00:00Z'] })),
  end: Type.Optional(Type.String({ format: 'date-time', description: 'Window end, exclusive (default: now)', examples: ['2026-12-01T00:00:00Z'] })),
};

/** GET /usage (spec 4.3) and GET /usage/summary: their parameters and shapes are ours, recorded in docs/decisions.md. */
export function registerUsageRoutes(app: FastifyInstance, billing: BillingService): void {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get(
    '/usage',
    {
      schema: {
        operationId: 'listUsage',
        summary: "The workspace's completed metered jobs in a time window, newest first",
        description: 'Each completed job with what it was charged, in USD and compute units. Pages follow `next_cursor`.',
        tags: ['usage'],
        querystring: Type.Object({ ...Window, ...PageQuery('jobs completed') }),
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

  typed.get(
    '/usage/summary',
    {
      schema: {
        operationId: 'summarizeUsage',
        summary: "The workspace's charges in a time window, summed: in total, by day, by model, engine or tag",
        description:
          'The charges `GET /usage` lists for the same window, counted and summed by the server in integer micro-USD, ' +
          'whatever their number. `group_by=day` sums each day (days start at midnight in `utc_offset`), `group_by=model` each ' +
          `model, \`group_by=day,model\` each model on each day. Grouped by day, the window is at most ${USAGE_SUMMARY_MAX_DAYS} days. ` +
          '`group_by=engine` (owners and admins; a member gets 403) sums each engine that took the jobs (docs/routing.md). ' +
          '`group_by=tag` sums each tag the jobs carry (`X-Mediagen-Tags`): a job with two tags counts under both, the jobs without tags ' +
          'under `tag: null`, so these groups add up to more than `total`, which counts each charge once (docs/billing.md).',
        tags: ['usage'],
        querystring: Type.Object({
          ...Window,
          group_by: Type.Optional(
            Type.Array(StringEnum(USAGE_GROUPINGS), {
              maxItems: USAGE_GROUPINGS.length,
              description: 'day, model, engine, tag, or several (comma-separated, or the parameter repeated); without it, the total only',
              examples: [['day', 'model']],
            }),
          ),
          utc_offset: Type.Optional(
            Type.String({
              pattern: UTC_OFFSET_PATTERN,
              description: "Where days start with group_by=day: an offset from UTC, -14:00 to +14:00 (default UTC; send a '+' as %2B)",
              examples: ['+01:00'],
            }),
          ),
        }),
        response: { 200: UsageSummary, ...errorResponses(400) },
      },
    },
    (request) =>
      billing.usageSummary(requireAuth(request.auth), {
        start: toMicros(request.query.start),
        end: toMicros(request.query.end),
        groupBy: (request.query.group_by ?? []) as UsageGrouping[],
        utcOffsetMinutes: parseUtcOffset(request.query.utc_offset, 'utc_offset'),
      }),
  );
}
