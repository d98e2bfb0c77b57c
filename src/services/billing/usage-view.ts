import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Cursor } from '../common/paging.js';

/**
 * The usage report (GET /usage) as the API shows it, declared once: the route's response schema
 * (and OpenAPI component, by `$id`) and, by `Static`, the billing service's return type.
 */

const USAGE_EXAMPLE = {
  job_id: '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69',
  type: 'image/vendor-a/model-a-2/medium',
  completed_at: '2026-11-22T12:00:04.250000Z',
  cost_usd: '0.030000',
  compute_units: 3,
};

export const UsageItem = Type.Object(
  {
    job_id: Type.String({ format: 'uuid', description: 'The completed job', examples: [USAGE_EXAMPLE.job_id] }),
    type: Type.String({ description: 'The job type (model path)', examples: [USAGE_EXAMPLE.type] }),
    completed_at: Type.String({ format: 'date-time', description: 'When the job completed and was charged', examples: [USAGE_EXAMPLE.completed_at] }),
    cost_usd: Type.String({ description: 'What the job was charged, in USD with six decimal places', pattern: '^\\d+\\.\\d{6}$', examples: [USAGE_EXAMPLE.cost_usd] }),
    compute_units: Type.Number({ description: 'The charge in compute units: 1 compute unit = $0.01', examples: [USAGE_EXAMPLE.compute_units] }),
  },
  { $id: 'UsageItem', additionalProperties: false, description: 'One completed metered job', examples: [USAGE_EXAMPLE] },
);
export type UsageItem = Static<typeof UsageItem>;

export const UsagePage = Type.Object(
  { items: Type.Array(UsageItem, { description: 'Completed jobs, newest first' }), next_cursor: Cursor('completion time') },
  { $id: 'UsagePage', description: 'A page of the usage report', examples: [{ items: [USAGE_EXAMPLE], next_cursor: null }] },
);
export type UsagePage = Static<typeof UsagePage>;

/** GET /usage/summary's groupings: by day (in the query's UTC offset), by model, (owners and admins) by engine, and by tag. */
export const USAGE_GROUPINGS = ['day', 'model', 'engine', 'tag'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

const SUM_EXAMPLE = { jobs: 2, cost_micros: 491_900, cost_usd: '0.491900', compute_units: 49.19 };

const sums = {
  jobs: Type.Integer({ minimum: 0, description: 'Charged jobs', examples: [SUM_EXAMPLE.jobs] }),
  cost_micros: Type.Integer({ minimum: 0, description: 'What they were charged, in integer micro-USD (1 USD = 1,000,000)', examples: [SUM_EXAMPLE.cost_micros] }),
  cost_usd: Type.String({ description: 'The same amount in USD with six decimal places', pattern: '^\\d+\\.\\d{6}$', examples: [SUM_EXAMPLE.cost_usd] }),
  compute_units: Type.Number({ description: 'The same amount in compute units: 1 compute unit = $0.01', examples: [SUM_EXAMPLE.compute_units] }),
};

export const UsageTotal = Type.Object(sums, { $id: 'UsageTotal', additionalProperties: false, description: 'Charges summed', examples: [SUM_EXAMPLE] });
export type UsageTotal = Static<typeof UsageTotal>;

const GROUP_EXAMPLE = { day: '2026-11-22', model: 'video/vendor-f/model-f', ...SUM_EXAMPLE };

export const UsageGroup = Type.Object(
  {
    day: Type.Optional(
      Type.String({ format: 'date', description: 'With group_by=day: the day, in the query\'s utc_offset (YYYY-MM-DD)', examples: [GROUP_EXAMPLE.day] }),
    ),
    model: Type.Optional(Type.String({ description: 'With group_by=model: the job type (model path)', examples: [GROUP_EXAMPLE.model] })),
    engine: Type.Optional(
      Type.String({
        description:
          "With group_by=engine (owners and admins): the engine that took the jobs, from their recorded route (docs/routing.md); a job without one counts for the engine its model is bound to now (its chain's first), or `unknown`",
        examples: ['comfyui:gpu'],
      }),
    ),
    tag: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          'With group_by=tag: a tag of the jobs (`X-Mediagen-Tags`); a job with two tags counts under both, so these groups add up to more than `total`; null: the jobs without tags (docs/billing.md)',
        examples: ['team-a'],
      }),
    ),
    ...sums,
  },
  { $id: 'UsageGroup', additionalProperties: false, description: 'The charges of one day, one model, or one model on one day', examples: [GROUP_EXAMPLE] },
);
export type UsageGroup = Static<typeof UsageGroup>;

export const UsageSummary = Type.Object(
  {
    total: UsageTotal,
    groups: Type.Array(UsageGroup, {
      description: 'One per combination of the groupings that has charges (none without group_by), by day, then model, engine and tag in code-point order (the untagged last); they add up to `total`, except by tag',
    }),
  },
  {
    $id: 'UsageSummary',
    additionalProperties: false,
    description: 'The usage report summed on the server: a total, and groups by day, by model, or both',
    examples: [{ total: SUM_EXAMPLE, groups: [GROUP_EXAMPLE] }],
  },
);
export type UsageSummary = Static<typeof UsageSummary>;
