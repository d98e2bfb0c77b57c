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
