import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { JobDetails } from '../../services/jobs/job-details.js';
import type { JobDetailsService } from '../../services/jobs/job-details.js';
import { presentJob } from '../../services/common/job-view.js';
import { requireAuth } from '../plugins/auth.js';
import { NoQuery, errorResponses } from '../openapi/common-schemas.js';

/** GET /jobs/{id}/details: a job page's data in one call (an extension of the spec). */
export function registerJobDetailsRoute(app: FastifyInstance, details: JobDetailsService, publicUrl: () => string): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/jobs/:id/details',
    {
      schema: {
        operationId: 'getJobDetails',
        summary: 'A job with its request, status history and billing',
        description:
          'The job exactly as GET /jobs/{id} shows it, with the request body it was created with (validated, defaults filled ' +
          'in; null once a zero-data-retention job ended), the X-Request-Id of its creation, every status it has taken with ' +
          'the time, the price held at admission and what it was charged once completed; for owners and admins, a job run at a ' +
          'hosted provider also shows the provider, its id and status there and the usage it reported (docs/providers.md). 404 as GET /jobs/{id}.',
        tags: ['jobs'],
        params: Type.Object({ id: Type.String({ description: 'Job identifier (UUID)', examples: ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'] }) }),
        querystring: NoQuery,
        response: { 200: JobDetails, ...errorResponses(400, 404) },
      },
    },
    async (request) => {
      const found = await details.get(requireAuth(request.auth), request.params.id);
      return { ...found, job: presentJob(found.job, publicUrl()) };
    },
  );
}
