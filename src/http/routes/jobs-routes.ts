import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Catalog } from '../../models/catalog.js';
import { StringEnum } from '../../models/schema-kit.js';
import { invalid } from '../../domain/error-catalogue.js';
import type { JobService } from '../../services/jobs/jobs.js';
import { presentJob } from '../../services/common/job-view.js';
import { JOB_STATUSES } from '../../domain/states.js';
import { isNodeAppJobType } from '../../domain/node-app-plan.js';
import { TAG_PATTERN, checkTag } from '../../domain/job-tags.js';
import { PageQuery, pageParams, toMicros } from '../request/query.js';
import { requireAuth } from '../plugins/auth.js';
import { DeletedJob, Job, JobEndedBody, JobPage, NoQuery, errorResponses } from '../openapi/common-schemas.js';

const IdParam = Type.Object({
  id: Type.String({ description: 'Job identifier (UUID)', examples: ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'] }),
});

/** GET /jobs's `types` (spec 4.1): each must be a model path of the catalog or a node-app job's type. */
function parseTypes(raw: string | undefined, catalog: Catalog): string[] | undefined {
  const types = raw?.split(',').map((t) => t.trim());
  const unknown = types?.find((t) => !catalog.get(t) && !isNodeAppJobType(t));
  if (unknown !== undefined) {
    throw invalid(
      `query parameter 'types' must be a comma-separated list of job types such as image/vendor-a/model-a-2/medium or node-app/<slug>; unknown type '${unknown}'`,
    );
  }
  return types;
}

export function registerJobRoutes(app: FastifyInstance, jobs: JobService, catalog: Catalog, publicUrl: () => string): void {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get(
    '/jobs',
    {
      schema: {
        operationId: 'listJobs',
        summary: "List the API user's jobs, newest first",
        description:
          'Pages of at most `limit` jobs, newest first; follow `next_cursor` for older ones. Filter by job types, status, a tag, and a ' +
          'window on the creation time (`start` inclusive, `end` exclusive; either may be left out); the filters combine, and ' +
          'the cursor pages within them.',
        tags: ['jobs'],
        // Checked by the query rules (query.ts), with messages that name the parameter.
        querystring: Type.Object({
          ...PageQuery('jobs created'),
          start: Type.Optional(Type.String({ format: 'date-time', description: 'Only jobs created at or after this time', examples: ['2026-11-01T00:00:00Z'] })),
          end: Type.Optional(Type.String({ format: 'date-time', description: 'Only jobs created before this time (exclusive)', examples: ['2026-12-01T00:00:00Z'] })),
          types: Type.Optional(Type.String({ description: 'Comma-separated job types: model paths, or node-app/<slug> for node-app jobs', examples: ['image/vendor-a/model-a-2/medium,video/vendor-f/model-f'] })),
          status: Type.Optional(StringEnum(JOB_STATUSES, { description: 'Only jobs in this status', examples: ['completed'] })),
          tag: Type.Optional(Type.String({ pattern: TAG_PATTERN, description: 'Only jobs carrying this tag (`X-Mediagen-Tags` at creation); one tag', examples: ['team-a'] })),
        }),
        response: { 200: JobPage, ...errorResponses(400) },
      },
    },
    async (request) => {
      const q = request.query;
      // Whether start <= end is the job service's rule.
      const page = await jobs.list(requireAuth(request.auth), {
        ...pageParams(q),
        start: toMicros(q.start),
        end: toMicros(q.end),
        types: parseTypes(q.types, catalog),
        status: q.status,
        ...(q.tag !== undefined ? { tag: checkTag(q.tag, "query parameter 'tag'") } : {}),
      });
      return { ...page, items: page.items.map((job) => presentJob(job, publicUrl())) };
    },
  );

  typed.get(
    '/jobs/:id',
    {
      schema: {
        operationId: 'getJob',
        summary: 'Get a job in its current state',
        description:
          'The job with its most current status. `result` holds the output URLs once it completed (the preview while ' +
          'intermediate-complete); `completed_at` and `result` are absent while they have no value.',
        tags: ['jobs'],
        params: IdParam,
        querystring: NoQuery,
        response: { 200: Job, ...errorResponses(400, 404) },
      },
    },
    async (request) => presentJob(await jobs.get(requireAuth(request.auth), request.params.id), publicUrl()),
  );

  typed.post(
    '/jobs/:id/cancel',
    {
      // Stores nothing new: like DELETE, it goes on while the data dir cannot take writes.
      config: { storesInside: true },
      schema: {
        operationId: 'cancelJob',
        summary: 'Cancel a job and keep its record',
        description:
          'Moves a job that has not ended to `cancelled`: its worker stops, its output files are removed, its hold is released (not ' +
          'billed) and its webhook is sent. The record stays: GET and lists show it `cancelled` (DELETE removes it instead). ' +
          'A job that has already ended answers 409 with its status. Send no body.',
        tags: ['jobs'],
        params: IdParam,
        querystring: NoQuery,
        response: { 200: Job, 409: JobEndedBody, ...errorResponses(400, 404) },
      },
    },
    async (request) => presentJob(await jobs.cancel(requireAuth(request.auth), request.params.id, request.log), publicUrl()),
  );

  typed.delete(
    '/jobs/:id',
    {
      schema: {
        operationId: 'deleteJob',
        summary: 'Delete a job and its outputs; a job still in progress is cancelled first',
        description: 'Removes the job and its output files. A job still in progress is cancelled first and not billed.',
        tags: ['jobs'],
        params: IdParam,
        querystring: NoQuery,
        response: { 200: DeletedJob, ...errorResponses(400, 404) },
      },
    },
    (request) => jobs.delete(requireAuth(request.auth), request.params.id, request.log),
  );
}
