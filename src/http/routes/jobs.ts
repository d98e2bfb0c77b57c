import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Catalog } from '../../models/catalog.js';
import { StringEnum } from '../../models/schema-kit.js';
import { invalid } from '../../domain/errors.js';
import type { JobListQuery, JobService } from '../../services/jobs.js';
import { presentJob } from '../../services/job-view.js';
import { JOB_STATUSES, isJobStatus } from '../../domain/states.js';
import { PAGE_LIMIT, parseDateTime, parseLimit, rejectUnknown, single } from '../query.js';
import type { RawQuery } from '../query.js';
import { requireAuth } from '../plugins/auth.js';
import { DeletedJob, Job, JobPage, errorResponses } from '../schemas.js';

/** GET /jobs query parameters (spec 4.1), each checked with a message that names it. */
function parseJobListQuery(query: RawQuery, catalog: Catalog): JobListQuery {
  rejectUnknown(query, ['cursor', 'limit', 'types', 'status']);
  const status = single(query, 'status');
  if (status !== undefined && !isJobStatus(status)) {
    throw invalid(`query parameter 'status' must be one of ${JOB_STATUSES.join(', ')}, got '${status}'`);
  }
  const typesRaw = single(query, 'types');
  const types = typesRaw?.split(',').map((t) => t.trim());
  const unknown = types?.find((t) => !catalog.get(t));
  if (unknown !== undefined) {
    throw invalid(
      `query parameter 'types' must be a comma-separated list of job types such as image/vendor-a/model-a-2/medium; unknown type '${unknown}'`,
    );
  }
  return { limit: parseLimit(query), before: parseDateTime(query, 'cursor'), types, status };
}

const IdParam = Type.Object({ id: Type.String({ description: 'Job identifier (UUID)' }) });

export function registerJobRoutes(app: FastifyInstance, jobs: JobService, catalog: Catalog, publicUrl: () => string): void {
  app.get(
    '/jobs',
    {
      schema: {
        operationId: 'listJobs',
        summary: "List the API user's jobs, newest first",
        tags: ['jobs'],
        querystring: Type.Object({
          cursor: Type.Optional(Type.String({ format: 'date-time', description: 'Only jobs created before this time' })),
          limit: Type.Optional(Type.Integer({ minimum: PAGE_LIMIT.min, maximum: PAGE_LIMIT.max, default: PAGE_LIMIT.default })),
          types: Type.Optional(Type.String({ description: 'Comma-separated job types (model paths)' })),
          status: Type.Optional(StringEnum(JOB_STATUSES)),
        }),
        response: { 200: JobPage, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const page = await jobs.list(requireAuth(request.auth), parseJobListQuery(request.query as RawQuery, catalog));
      return { ...page, items: page.items.map((job) => presentJob(job, publicUrl())) };
    },
  );

  app.get(
    '/jobs/:id',
    {
      schema: {
        operationId: 'getJob',
        summary: 'Get a job in its current state',
        tags: ['jobs'],
        params: IdParam,
        response: { 200: Job, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      rejectUnknown(request.query as RawQuery, []);
      return presentJob(await jobs.get(requireAuth(request.auth), (request.params as { id: string }).id), publicUrl());
    },
  );

  app.delete(
    '/jobs/:id',
    {
      schema: {
        operationId: 'deleteJob',
        summary: 'Delete a job and its outputs; a job still in progress is cancelled first',
        tags: ['jobs'],
        params: IdParam,
        response: { 200: DeletedJob, ...errorResponses(401, 403, 404) },
      },
    },
    (request) => {
      rejectUnknown(request.query as RawQuery, []);
      return jobs.delete(requireAuth(request.auth), (request.params as { id: string }).id, request.log);
    },
  );
}
