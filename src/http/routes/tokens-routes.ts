import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { TokenService } from '../../services/identity/tokens.js';
import { ApiTokenList, ApiTokenRequest, ApiTokenView, CreatedApiToken } from '../../services/identity/workspace-views.js';
import { requireAuth } from '../plugins/auth.js';
import { refuseIdempotencyKey } from '../request/request-headers.js';
import { NoQuery, errorResponses } from '../openapi/common-schemas.js';

const TAGS = ['tokens'];

/** A token name is at most 200 characters: 4 KiB holds any of them, escaped. */
const TOKEN_BODY_LIMIT_BYTES = 4096;

const WHO = ' Owners and admins only: any other caller gets 403.';

/**
 * The workspace's API tokens (spec 5.3): list, create (its secret answered once), revoke. The use
 * cases (services/identity/tokens.ts) check the caller's role; the routes only translate.
 */
export function registerTokenRoutes(fastify: FastifyInstance, tokens: TokenService): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/tokens',
    {
      schema: {
        operationId: 'listTokens',
        summary: "The workspace's API tokens, newest first",
        description:
          'Every API token of the workspace, revoked ones included, newest first: name, creator, creation, last use (recorded ' +
          'at most once a minute) and revocation; `current` marks the token of this request. Never a token itself or its hash.' + WHO,
        tags: TAGS,
        querystring: NoQuery,
        response: { 200: ApiTokenList, ...errorResponses(400) },
      },
    },
    (request) => tokens.list(requireAuth(request.auth)),
  );

  app.post(
    '/tokens',
    {
      bodyLimit: TOKEN_BODY_LIMIT_BYTES,
      config: { stores: 'store new API tokens' },
      schema: {
        operationId: 'createToken',
        summary: 'Create an API token; its secret is in this answer only',
        description:
          'Creates a token of the calling member: requests with it act with that member\'s role. The answer carries the token ' +
          'itself (`secret`) this once; the server keeps only its SHA-256 hash, so a lost secret cannot be shown again (revoke ' +
          'it and create another). An Idempotency-Key is refused (400): a stored answer would keep the secret; after a failed try, list the tokens. Unknown body properties are refused.' + WHO,
        tags: TAGS,
        querystring: NoQuery,
        body: ApiTokenRequest,
        response: { 201: CreatedApiToken, ...errorResponses(400, 413, 415) },
      },
    },
    async (request, reply) => {
      refuseIdempotencyKey(request.raw.rawHeaders, 'POST /tokens', 'after a failed try, GET /tokens shows whether the token was made (revoke it if its secret was lost)');
      return reply.code(201).send(await tokens.create(requireAuth(request.auth), request.body));
    },
  );

  app.post(
    '/tokens/:id/revoke',
    {
      // Changes a row, stores nothing new: a revocation goes on while the data dir is short of space.
      config: { storesInside: true },
      schema: {
        operationId: 'revokeToken',
        summary: 'Revoke an API token',
        description:
          'Requests with the token answer 401 from now on (at once on this server process; within 200 ms on others sharing ' +
          'the store). Revoking a revoked token answers it with its first `revoked_at`. The calling token may revoke itself: ' +
          'this answer is its last. Send no body.' + WHO,
        tags: TAGS,
        params: Type.Object({ id: Type.String({ description: 'The token id (from GET /tokens)', examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'] }) }),
        querystring: NoQuery,
        response: { 200: ApiTokenView, ...errorResponses(400, 404) },
      },
    },
    (request) => tokens.revoke(requireAuth(request.auth), request.params.id),
  );
}
