import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { NodeApp, NodeAppVersionPage } from '../../services/node-apps/node-app-view.js';
import type { NodeAppService } from '../../services/node-apps/node-apps.js';
import { requireAuth } from '../plugins/auth.js';
import { PageQuery, pageParams } from '../request/query.js';
import { errorResponses } from '../openapi/common-schemas.js';
import type { Services } from '../../services/services.js';
import { OPTION_LABELS, idempotencyKeyFrom, tagsFrom, webhookUrlFrom, zeroDataRetentionFrom } from '../request/request-headers.js';
import { headerSchema } from '../request/creation-handler.js';
import { BalanceBody, CreatedJob, CreatedOrWaitedJob, ForbiddenBody, IdempotencyErrors, NoQuery, PreferenceAppliedHeader, ReplayedHeader, SunsetBody } from '../openapi/common-schemas.js';
import { createdAnswer } from '../request/prefer-wait.js';
import type { WaitDeps } from '../request/prefer-wait.js';

export function registerNodeAppRoutes(app: FastifyInstance, nodeApps: NodeAppService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/node-apps/:node_app_id/versions',
    {
      schema: {
        operationId: 'listNodeAppVersions',
        summary: "List a node app's runnable versions, newest first",
        description: "The app's published versions with their input and output schemas (spec 2.5); query parameters as GET /jobs's.",
        tags: ['node-apps'],
        params: Type.Object({
          node_app_id: Type.String({ description: 'Node app identifier (UUID)', examples: ['5d0c2b6e-8a8f-4f3e-9b1a-6c2d7e8f9a01'] }),
        }),
        querystring: Type.Object(PageQuery('versions created')),
        response: { 200: NodeAppVersionPage, ...errorResponses(400, 404) },
      },
    },
    (request) => nodeApps.listVersions(requireAuth(request.auth), request.params.node_app_id, pageParams(request.query)),
  );

  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/node-apps/:id',
    {
      schema: {
        operationId: 'getNodeApp',
        summary: 'Get a node app by version id',
        description: "The app as of one of its versions: its schemas, example outputs and how its graph maps inputs and outputs (docs/node-apps.md).",
        tags: ['node-apps'],
        params: Type.Object({ id: Type.String({ description: 'Node app version identifier (UUID)', examples: ['9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d'] }) }),
        querystring: NoQuery,
        response: { 200: NodeApp, ...errorResponses(400, 404) },
      },
    },
    (request) => nodeApps.get(requireAuth(request.auth), request.params.id),
  );
}

// POST /node-apps/{id}/execute (issue 15 point 7), apart from the reads above.

export interface NodeAppExecuteDeps extends WaitDeps, Pick<Services, 'nodeAppExecution'> {
  readonly allowPrivateUrls: boolean;
  /** The largest JSON body (`body_limit_bytes`), as for generation. */
  readonly bodyLimitBytes: number;
}

const EXECUTE_EXAMPLE = { prompt: 'A lighthouse on a cliff at dusk', motion: 'slow push-in, waves crashing' };

/**
 * Runs a version's graph as one job. Answers the original API's shape: an array holding the
 * created job, pending like any creation; the job's `result.urls` is an object of the graph's
 * named outputs once it completes.
 */
export function registerNodeAppExecuteRoute(app: FastifyInstance, deps: NodeAppExecuteDeps): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/node-apps/:id/execute',
    {
      bodyLimit: deps.bodyLimitBytes,
      schema: {
        operationId: 'executeNodeApp',
        summary: 'Execute a node app version',
        description:
          "Creates one job that runs the version's graph: its steps call catalog models, independent ones in parallel, each " +
          "through the same engines as a generation job. The body is the app's inputs, checked against the version's " +
          '`input_openapi_schema`; the steps\' summed price is held at once (402 when the balance does not cover it), and the job ' +
          'is admitted like any other (429). Answers an array holding the created job, pending; when it completes, `result.urls` ' +
          'maps each output name of the graph to its URL. The steps are not jobs of their own. A version published without a ' +
          'graph cannot be executed (400); a step whose model is past its sunset answers 410.',
        tags: ['node-apps'],
        params: Type.Object({
          id: Type.String({ description: 'Node app version identifier (`node_app_version_id`)', examples: ['6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b'] }),
        }),
        // No node app offers zero data retention: the header is not declared, and the use case refuses it.
        headers: headerSchema({ zeroDataRetention: false }),
        querystring: NoQuery,
        body: Type.Object({}, {
          additionalProperties: true,
          $id: 'NodeAppInputs',
          description: "The node app's inputs, as its version's `input_openapi_schema` describes them",
          examples: [EXECUTE_EXAMPLE],
        }),
        response: {
          200: Type.Array(CreatedOrWaitedJob, {
            $id: 'CreatedJobs',
            description: 'The created job, pending (the original API answers an array of one); with `Prefer: wait`, the job as GET /jobs/{id} shows it when the wait ended',
            examples: [[{ ...(CreatedJob.examples as Record<string, unknown>[])[0], type: 'node-app/lighthouse-clip' }]],
            headers: { ...ReplayedHeader, ...PreferenceAppliedHeader },
          }),
          ...errorResponses(400, 404, 413, 415, 429),
          ...IdempotencyErrors,
          402: BalanceBody,
          403: ForbiddenBody,
          410: SunsetBody,
        },
      },
    },
    async (request, reply) => {
      const headers = request.raw.rawHeaders;
      const caller = requireAuth(request.auth);
      const created = await deps.nodeAppExecution.execute(
        {
          versionId: request.params.id,
          body: request.body,
          caller,
          options: {
            webhookUrl: webhookUrlFrom(headers),
            zeroDataRetention: zeroDataRetentionFrom(headers, false),
            idempotencyKey: idempotencyKeyFrom(headers),
            requestId: request.id,
            tags: tagsFrom(headers),
          },
        },
        { allowPrivateUrls: deps.allowPrivateUrls, publicUrl: deps.publicUrl(), labels: OPTION_LABELS },
      );
      if (created.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(200).send([await createdAnswer(request, reply, caller, created, deps)]);
    },
  );
}
