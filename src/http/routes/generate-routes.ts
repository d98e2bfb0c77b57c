import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.js';
import { operationIdOf } from '../../models/model.js';
import { BODY_COMPONENT, RESULT_URLS } from '../openapi/openapi.js';
import { ModelFileUrls } from '../../services/common/job-view.js';
import {
  BalanceBody,
  CreatedOrWaitedJob,
  ForbiddenBody,
  DeprecationHeaders,
  IdempotencyErrors,
  NoQuery,
  PreferenceAppliedHeader,
  ReplayedHeader,
  SunsetBody,
  errorResponses,
} from '../openapi/common-schemas.js';
import { creationHandler, headerSchema } from '../request/creation-handler.js';
import type { CreationDeps } from '../request/creation-handler.js';

export interface GenerateDeps extends CreationDeps, Pick<Services, 'catalog'> {}

/** What every generation endpoint does (spec 4.2), before what a route says of itself (deprecation). */
const GENERATE_DESCRIPTION =
  'Creates a job and answers at once with it pending (`completed_at` and `result` null). Read the outcome with ' +
  'GET /jobs/{id} or its event stream (GET /jobs/{id}/events), send X-Webhook-URL to receive it by POST (see `webhooks`), ' +
  'or send `Prefer: wait` to be answered when it ends (at most 60 s). Unknown body properties are refused.';

/**
 * What a 3D model's job holds when completed, which the creation response (result null) cannot
 * show: said in the description, and named for tools by `x-result-urls` (the ModelFileUrls component).
 */
const RESULT_3D =
  ' When the job completes, `result.urls` lists the model and its preview as objects: ' +
  '`[{"type": "model", "url": …}, {"type": "preview", "url": …}]` (ModelFileUrls): the model is binary glTF 2.0 ' +
  '(`model/gltf-binary`), the preview a PNG render of it.';

/**
 * POST /generate/{model path} for every catalog entry; adding a model is adding an entry. The
 * routes only translate (request/creation-handler.ts): headers to the use case's options (services/jobs/generation.ts), which checks
 * everything, and its job back with the deprecation and Idempotent-Replayed headers. The body
 * schema is declared for OpenAPI; the use case validates it (http/request/validator-compiler.ts passes it through).
 */
export function registerGenerateRoutes(app: FastifyInstance, deps: GenerateDeps): void {
  for (const entry of deps.catalog.entries) {
    // A model with a route of its own (style training: /styles/train) is served there.
    if (entry.route) continue;
    const retired = !entry.request;
    app.post(
      `/generate/${entry.path}`,
      {
        bodyLimit: deps.bodyLimitBytes,
        schema: {
          operationId: operationIdOf(entry.path),
          summary: entry.summary,
          description:
            (entry.kind === '3d' ? GENERATE_DESCRIPTION + RESULT_3D : GENERATE_DESCRIPTION) +
            (entry.deprecation
              ? ` Deprecated: answers 410 from ${entry.deprecation.sunsetDate}${entry.deprecation.replacement ? `; use ${entry.deprecation.replacement}` : ''}.`
              : ''),
          ...(entry.kind === '3d' ? { [RESULT_URLS]: ModelFileUrls } : {}),
          tags: [entry.tag ?? `${entry.kind} generation`],
          ...(entry.deprecation ? { deprecated: true } : {}),
          headers: headerSchema(entry),
          querystring: NoQuery,
          ...(entry.request ? { body: entry.request } : {}),
          ...(entry.requestName ? { [BODY_COMPONENT]: entry.requestName } : {}),
          response: retired
            ? { 410: SunsetBody }
            : {
                200: { ...CreatedOrWaitedJob, headers: { ...ReplayedHeader, ...PreferenceAppliedHeader, ...(entry.deprecation ? DeprecationHeaders : {}) } },
                ...errorResponses(400, 413, 415, 429),
                ...IdempotencyErrors,
                402: BalanceBody,
                403: ForbiddenBody,
                ...(entry.deprecation ? { 410: SunsetBody } : {}),
              },
        },
        // Sunset is checked per request, so it takes effect the moment the date is reached, and
        // before the body is read: a retired model answers 410 whatever was sent.
        onRequest: async () => {
          deps.generation.available(entry.path, deps.publicUrl());
        },
      },
      creationHandler(entry, deps),
    );
  }
}
