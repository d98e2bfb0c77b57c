import { Type } from '@sinclair/typebox';
import { invalid } from '../../domain/error-catalogue.js';
import { JOB_STATUSES } from '../../domain/states.js';
import { checkTag } from '../../domain/job-tags.js';
import { parseIsoMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import { StringEnum } from '../../models/schema-kit.js';
import type { Catalog } from '../../models/catalog.js';
import { JobPage, presentJob } from '../../services/common/job-view.js';
import { defineTool } from '../tool.js';

/** Page sizes of every list (spec section 8), as GET /jobs takes them. */
export const Limit = Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Page size' });

export const Cursor = (what: string) =>
  Type.String({ format: 'date-time', description: `Only ${what} before this time: the previous page's next_cursor`, examples: ['2026-11-22T12:00:00.000000Z'] });

/** A date-time the schema's format check accepted, as microseconds; the store's precision is finer than Date's. */
export function micros(value: string | undefined, name: string): Micros | undefined {
  if (value === undefined) return undefined;
  const us = parseIsoMicros(value);
  if (us === undefined) throw invalid(`'${name}' must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z, got '${value}'`);
  return us;
}

function checkTypes(types: readonly string[] | undefined, catalog: Catalog): readonly string[] | undefined {
  const unknown = types?.find((t) => !catalog.get(t));
  if (unknown !== undefined) throw invalid(`'types' must list job types (model ids) such as image/vendor-a/model-a-2/medium; unknown type '${unknown}'`);
  return types;
}

export const listJobs = defineTool({
  name: 'list_jobs',
  title: 'List jobs',
  description: "Your jobs, newest first, a page at a time: pass next_cursor back as cursor for older ones. Filter by job types (model ids), status and a tag.",
  input: Type.Object(
    {
      limit: Type.Optional(Limit),
      cursor: Type.Optional(Cursor('jobs created')),
      types: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: 'Only jobs of these types (model ids)' })),
      status: Type.Optional(StringEnum(JOB_STATUSES, { description: 'Only jobs in this status' })),
      tag: Type.Optional(Type.String({ description: 'Only jobs carrying this tag (given at creation: `tags`)', examples: ['team-a'] })),
    },
    { additionalProperties: false },
  ),
  output: JobPage,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(deps, input, ctx) {
    const page = await deps.jobs.list(ctx.caller, {
      limit: input.limit ?? 100,
      before: micros(input.cursor, 'cursor'),
      types: checkTypes(input.types, deps.catalog),
      status: input.status,
      ...(input.tag !== undefined ? { tag: checkTag(input.tag, "'tag'") } : {}),
    });
    return { structured: { ...page, items: page.items.map((job) => presentJob(job, ctx.publicUrl)) } };
  },
});
