import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { WebhookDeliveryList } from '../../services/list-views.js';
import type { WebhookService } from '../../services/webhooks.js';
import { requireAuth } from '../plugins/auth.js';
import { NoQuery, errorResponses } from '../schemas.js';

/** GET /jobs/{id}/webhook-deliveries: an extension, so a missing webhook can be explained. */
export function registerWebhookDeliveryRoutes(app: FastifyInstance, webhooks: WebhookService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/jobs/:id/webhook-deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "The job's webhook deliveries and every attempt (an extension of the spec)",
        description: 'What happened to the webhook of a job created with X-Webhook-URL: its state and each POST with the answer it got.',
        tags: ['jobs'],
        params: Type.Object({ id: Type.String({ description: 'Job identifier (UUID)', examples: ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'] }) }),
        querystring: NoQuery,
        response: { 200: WebhookDeliveryList, ...errorResponses(400, 404) },
      },
    },
    (request) => webhooks.deliveries(requireAuth(request.auth), request.params.id),
  );
}
