import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { JobService } from '../../services/jobs.js';
import { JOB_STATUSES } from '../../services/states.js';
import { rejectUnknown } from '../../services/list-query.js';
import type { RawQuery } from '../../services/list-query.js';
import { StringEnum } from '../../services/catalog/schema-kit.js';
import { requireAuth } from '../plugins/auth.js';
import { DeletedJob, Job, JobPage, errorResponses } from '../schemas.js';

const IdParam = Type.Object({ id: Type.String({ description: 'Job identifier (UUID)' }) });

export function registerJobRoutes(app: FastifyInstance, jobs: JobService): void {
  app.get(
    '/jobs',
    {
      schema: {
        operationId: 'listJobs',
        summary: "List the API user's jobs, newest first",
        tags: ['jobs'],
        querystring: Type.Object({
          cursor: Type.Optional(Type.String({ format: 'date-time', description: 'Only jobs created before this time' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
          types: Type.Optional(Type.String({ description: 'Comma-separated job types (model paths)' })),
          status: Type.Optional(StringEnum(JOB_STATUSES)),
        }),
        response: { 200: JobPage, ...errorResponses(400, 401, 403) },
      },
    },
    (request) => jobs.list(requireAuth(request.auth), request.query as RawQuery),
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
    (request) => {
      rejectUnknown(request.query as RawQuery, []);
      return jobs.get(requireAuth(request.auth), (request.params as { id: string }).id);
    },
  );

  app.delete(
    '/jobs/:id',
    {
      schema: {
        operationId: 'deleteJob',
        summary: 'Delete a job',
        tags: ['jobs'],
        params: IdParam,
        response: { 200: DeletedJob, ...errorResponses(401, 403, 404) },
      },
    },
    (request) => {
      rejectUnknown(request.query as RawQuery, []);
      return jobs.delete(requireAuth(request.auth), (request.params as { id: string }).id);
    },
  );
}
