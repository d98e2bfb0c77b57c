import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.js';
import { WebhookSecret, WorkspaceView } from '../../services/identity/workspace-views.js';
import { requireAuth } from '../plugins/auth.js';
import { refuseIdempotencyKey } from '../request/request-headers.js';
import { NoQuery, errorResponses } from '../openapi/common-schemas.js';


/**
 * GET /workspace (any role) and the webhook signing secret (owners and admins). The secret is in
 * a response body only; the request log never holds bodies (http/logging.ts).
 */
export function registerWorkspaceRoutes(fastify: FastifyInstance, deps: Pick<Services, 'workspace' | 'webhooks'>): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/workspace',
    {
      schema: {
        operationId: 'getWorkspace',
        summary: "The caller's workspace: its member's role, the API balance and the job limits",
        description:
          'Who the calling token acts as (the member who created it, and that member\'s role now: null once removed), the token ' +
          'itself, the API balance with what is held for jobs in progress and what is available, and the concurrency limits. Any role.',
        tags: ['workspace'],
        querystring: NoQuery,
        response: { 200: WorkspaceView, ...errorResponses(400) },
      },
    },
    (request) => deps.workspace.describe(requireAuth(request.auth)),
  );

  app.get(
    '/workspace/webhook-secret',
    {
      schema: {
        operationId: 'getWebhookSecret',
        summary: "The workspace's webhook signing secret",
        description:
          'The Standard Webhooks secret the workspace\'s webhooks are signed with (made on first use), and, after a rotation, until ' +
          'when the previous one also signs. Owners and admins only: any other caller gets 403.',
        tags: ['webhooks'],
        querystring: NoQuery,
        response: { 200: WebhookSecret, ...errorResponses(400) },
      },
    },
    (request) => {
      const auth = requireAuth(request.auth);
      return deps.webhooks.showSecret(auth.workspace, auth.memberEmail);
    },
  );

  app.post(
    '/workspace/webhook-secret/rotate',
    {
      config: { storesInside: true },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Replace the webhook signing secret',
        description:
          'Makes a new secret the one webhooks are signed with; the previous one keeps signing too for 24 hours ' +
          '(`previous_secret_valid_until`), so receivers can switch without losing a delivery. A rotation within those 24 hours ' +
          'replaces the secret again and the one before the previous stops signing at once. Send no body and no Idempotency-Key ' +
          '(refused: a rotation cannot be replayed). Owners and admins only.',
        tags: ['webhooks'],
        querystring: NoQuery,
        response: { 200: WebhookSecret, ...errorResponses(400) },
      },
    },
    (request) => {
      refuseIdempotencyKey(request.raw.rawHeaders, 'POST /workspace/webhook-secret/rotate', 'after a failed try, GET /workspace/webhook-secret shows whether it rotated');
      const auth = requireAuth(request.auth);
      return deps.webhooks.rotateSecret(auth.workspace, auth.memberEmail);
    },
  );
}
