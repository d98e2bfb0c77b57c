import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { StringEnum } from '../../models/schema-kit.js';
import { Cursor } from '../common/paging.js';

/**
 * Webhook deliveries as the API shows them (of a job, and of the workspace), declared once: the
 * routes' response schemas (OpenAPI components by `$id`) and, by `Static`, the webhook service's
 * return types.
 */

const ATTEMPT_EXAMPLE = {
  attempt: 1,
  attempted_at: '2026-11-22T12:00:05.000000Z',
  status: 503,
  error: null,
  duration_ms: 84,
  next_retry_at: '2026-11-22T12:00:10.000000Z',
};

const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: 'The attempt number, from 1', examples: [1] }),
    attempted_at: Type.String({ format: 'date-time', description: 'When the POST was sent', examples: [ATTEMPT_EXAMPLE.attempted_at] }),
    status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null when it gave none", examples: [503] }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why it was not delivered: timeout, connection refused, refused address, ...', examples: ['timeout'] }),
    duration_ms: Type.Integer({ minimum: 0, description: 'How long the attempt took', examples: [84] }),
    next_retry_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the next attempt is due; null after the last', examples: [ATTEMPT_EXAMPLE.next_retry_at] }),
  },
  { description: 'One POST to the receiver' },
);

export const DELIVERY_STATES = ['pending', 'delivered', 'gone', 'refused', 'exhausted'] as const;

const DELIVERY_EXAMPLE = {
  webhook_id: 'msg_2bQ4m8Yb3xVnq1Qk',
  event: 'completed',
  url: 'https://receiver.example/hooks/mediagen',
  state: 'pending',
  created_at: '2026-11-22T12:00:04.250000Z',
  next_attempt_at: '2026-11-22T12:00:10.000000Z',
  attempts: [ATTEMPT_EXAMPLE],
};

export const WebhookDelivery = Type.Object(
  {
    webhook_id: Type.String({ description: 'The webhook-id header, the same on every attempt', examples: [DELIVERY_EXAMPLE.webhook_id] }),
    event: Type.String({ description: 'The status the job reached: completed, failed or cancelled', examples: ['completed'] }),
    url: Type.String({ description: 'The X-Webhook-URL, without user-info', examples: [DELIVERY_EXAMPLE.url] }),
    state: StringEnum(DELIVERY_STATES, { description: 'Where the delivery is', examples: ['delivered'] }),
    created_at: Type.String({ format: 'date-time', description: 'When the job reached its terminal status', examples: [DELIVERY_EXAMPLE.created_at] }),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the next attempt is due, while pending', examples: [DELIVERY_EXAMPLE.next_attempt_at] }),
    attempts: Type.Array(WebhookAttempt, { description: 'Every attempt, oldest first' }),
  },
  { $id: 'WebhookDelivery', description: "A job's webhook delivery", examples: [DELIVERY_EXAMPLE] },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryList = Type.Object(
  { items: Type.Array(WebhookDelivery, { description: "The job's deliveries" }) },
  { $id: 'WebhookDeliveryList', description: "A job's webhook deliveries and their attempts", examples: [{ items: [DELIVERY_EXAMPLE] }] },
);
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>;

const WORKSPACE_DELIVERY_EXAMPLE = { job_id: '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69', ...DELIVERY_EXAMPLE };

/** GET /webhook-deliveries: a delivery of any of the workspace's jobs, with the job's id. */
export const WorkspaceWebhookDelivery = Type.Object(
  {
    job_id: Type.String({ format: 'uuid', description: 'The job whose end the delivery reports (it may have been deleted since)', examples: [WORKSPACE_DELIVERY_EXAMPLE.job_id] }),
    ...WebhookDelivery.properties,
  },
  { $id: 'WorkspaceWebhookDelivery', description: "A webhook delivery of one of the workspace's jobs", examples: [WORKSPACE_DELIVERY_EXAMPLE] },
);
export type WorkspaceWebhookDelivery = Static<typeof WorkspaceWebhookDelivery>;

export const WebhookDeliveryPage = Type.Object(
  { items: Type.Array(WorkspaceWebhookDelivery, { description: 'Deliveries, newest first' }), next_cursor: Cursor('delivery creation time') },
  { $id: 'WebhookDeliveryPage', description: "A page of the workspace's webhook deliveries", examples: [{ items: [WORKSPACE_DELIVERY_EXAMPLE], next_cursor: null }] },
);
export type WebhookDeliveryPage = Static<typeof WebhookDeliveryPage>;
