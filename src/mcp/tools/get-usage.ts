import { Type } from '@sinclair/typebox';
import { UsagePage } from '../../services/billing/usage-view.js';
import { defineTool } from '../tool.js';
import { Cursor, Limit, micros } from './list-jobs.js';

export const getUsage = defineTool({
  name: 'get_usage',
  title: 'Get usage',
  description:
    "Your workspace's completed, charged jobs in a time window, newest first, with what each cost in USD and compute units " +
    '(1 compute unit = $0.01). The window defaults to the 30 days before `end` (default: now); pages follow next_cursor.',
  input: Type.Object(
    {
      start: Type.Optional(Type.String({ format: 'date-time', description: 'Window start, inclusive', examples: ['2026-11-01T00:00:00Z'] })),
      end: Type.Optional(Type.String({ format: 'date-time', description: 'Window end, exclusive', examples: ['2026-12-01T00:00:00Z'] })),
      limit: Type.Optional(Limit),
      cursor: Type.Optional(Cursor('jobs completed')),
    },
    { additionalProperties: false },
  ),
  output: UsagePage,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(deps, input, ctx) {
    const page = await deps.billing.usage(ctx.caller, {
      start: micros(input.start, 'start'),
      end: micros(input.end, 'end'),
      before: micros(input.cursor, 'cursor'),
      limit: input.limit ?? 100,
    });
    return { structured: page };
  },
});
