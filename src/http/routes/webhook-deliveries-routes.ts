import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { WebhookDeliveryList, WebhookDeliveryPage } from '../../services/webhooks/delivery-view.js';
import type { WebhookService } from '../../services/webhooks/webhooks.js';
import { requireAuth } from '../plugins/auth.js';
import { PageQuery, pageParams } from '../request/query.js';
import { NoQuery, errorResponses } from '../openapi/common-schemas.js';

/**
 * GET /jobs/{id}/webhook-deliveries and GET /webhook-deliveries: extensions, so a missing webhook
 * can be explained. Any role: whoever may read a job may read what happened to its webhook.
 */
export function registerWebhookDeliveryRoutes(fastify: FastifyInstance, webhooks: WebhookService): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/webhook-deliveries',
    {
      schema: {
        operationId: 'listWorkspaceWebhookDeliveries',
        summary: "The workspace's webhook deliveries across its jobs, newest first",
        description:
          'Every webhook delivery of the workspace (one per job created with X-Webhook-URL, written when the job ended), newest ' +
          'first, each with its job id, state and every attempt. Pages of at most `limit`; follow `next_cursor` for older ones. ' +
          "A deleted job's delivery stays listed until the retention janitor prunes it.",
        tags: ['webhooks'],
        querystring: Type.Object({ ...PageQuery('deliveries created') }),
        response: { 200: WebhookDeliveryPage, ...errorResponses(400) },
      },
    },
    (request) => webhooks.workspaceDeliveries(requireAuth(request.auth), pageParams(request.query)),
  );

  app.get(
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
