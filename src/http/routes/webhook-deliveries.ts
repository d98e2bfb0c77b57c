import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { WebhookService } from '../../services/webhooks.js';
import { StringEnum } from '../../models/schema-kit.js';
import { rejectUnknown } from '../query.js';
import type { RawQuery } from '../query.js';
import { requireAuth } from '../plugins/auth.js';
import { errorResponses } from '../schemas.js';

const Attempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  attempted_at: Type.String({ format: 'date-time' }),
  status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null when it gave none" }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it was not delivered: timeout, connection refused, refused address, ...' }),
  duration_ms: Type.Integer({ minimum: 0 }),
  next_retry_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const Delivery = Type.Object({
  webhook_id: Type.String({ description: 'The webhook-id header, the same on every attempt' }),
  event: Type.String({ description: 'The status the job reached: completed, failed or cancelled' }),
  url: Type.String({ description: 'The X-Webhook-URL, without user-info' }),
  state: StringEnum(['pending', 'delivered', 'gone', 'refused', 'exhausted'] as const),
  created_at: Type.String({ format: 'date-time' }),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  attempts: Type.Array(Attempt),
});

/** GET /jobs/{id}/webhook-deliveries: an extension, so a missing webhook can be explained. */
export function registerWebhookDeliveryRoutes(app: FastifyInstance, webhooks: WebhookService): void {
  app.get(
    '/jobs/:id/webhook-deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "The job's webhook deliveries and every attempt (an extension of the spec)",
        tags: ['jobs'],
        params: Type.Object({ id: Type.String({ description: 'Job identifier (UUID)' }) }),
        response: { 200: Type.Object({ items: Type.Array(Delivery) }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    (request) => {
      rejectUnknown(request.query as RawQuery, []);
      return webhooks.deliveries(requireAuth(request.auth), (request.params as { id: string }).id);
    },
  );
}
