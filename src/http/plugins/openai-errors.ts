/**
 * The /v1 door's errors in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, with
 * OpenAI's statuses, so OpenAI's SDKs raise their own typed errors (docs/openai.md#errors). The
 * catalogue's codes stay the one source of refusals; this module only says how /v1 shows them.
 * /v1 authenticates as every route does (plugins/auth.ts: the same bearer tokens); a refusal of
 * its hook reaches the /v1 scope's error handler, so a bad token is OpenAI's 401 too.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/error-catalogue.js';
import type { ErrorCode } from '../../domain/error-catalogue.js';
import { INFRA_FAULT_ALERT, infraFault } from '../../lib/infra-fault.js';
import { JobOutcomeError } from '../../services/openai/openai-outcome.js';
import { paramOf } from '../../services/openai/openai-fields.js';
import { headersOf, statusOf } from '../error-status.js';
import { RETRY_AFTER } from '../openapi/common-schemas.js';
import { lingerAfterAnswer } from '../lingering-close.js';
import { logFailure } from '../logging.js';
import { toDomainError } from './error-handler.js';

export const OPENAI_PREFIX = '/v1';
/** The OpenAPI tag of every /v1 route. */
export const OPENAI_TAG = 'openai compatible';

export const OpenAiErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        message: Type.String({ minLength: 1, description: 'What is wrong', examples: ["size 'huge' is not WxH (such as 1024x1024) or auto"] }),
        type: Type.String({ description: '`invalid_request_error`, `requests` (rate limit), `insufficient_quota`, or `server_error`', examples: ['invalid_request_error'] }),
        param: Type.Union([Type.String(), Type.Null()], { description: 'The request parameter at fault, or null', examples: ['size'] }),
        code: Type.Union([Type.String(), Type.Null()], {
          description:
            "A machine-readable reason: `model_not_found`, `rate_limit_exceeded`, `insufficient_quota`, `token_budget_exceeded` and `model_not_allowed` (the calling token's own limits), or a failed job's error code",
          examples: [null],
        }),
      },
      { description: 'The error' },
    ),
  },
  {
    $id: 'OpenAiError',
    description: "An error in OpenAI's shape",
    examples: [{ error: { message: "size 'huge' is not WxH (such as 1024x1024) or auto", type: 'invalid_request_error', param: 'size', code: null } }],
  },
);
export type OpenAiErrorBody = Static<typeof OpenAiErrorBody>;

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Invalid request (the parameter at fault is in error.param)',
  401: 'Missing, unknown or revoked API token',
  403: "API access disabled for the workspace, or (code model_not_allowed, on a create) the calling token's own `models` patterns do not allow the model",
  404: 'Unknown, retired or sunset model (code model_not_found), or no such object',
  409: 'An Idempotency-Key request still in flight',
  413: 'The request or an uploaded file is too large',
  415: 'The body is not of a type this route takes',
  422: 'An Idempotency-Key reused with a different request',
  429:
    "The workspace's concurrency and backlog are full (code rate_limit_exceeded), or the calling token has its maximum of jobs in flight (the same); " +
    "the workspace's balance is too low (code insufficient_quota), or the calling token's own spend limit is reached (type insufficient_quota, code token_budget_exceeded)",
  500: 'A job failed or was cancelled; error.code is the job\'s error code',
  503: 'The server cannot serve this right now',
  504: 'The jobs did not end within the wait (openai.wait_seconds); they go on as native jobs',
};

/** Response declarations of /v1 routes, in OpenAI's shape, for OpenAPI and the response checks. */
export function openAiErrorResponses(...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(
    statuses.map((s) => {
      const headers =
        s === 401
          ? { 'www-authenticate': { type: 'string', const: 'Bearer realm="mediagen"', description: 'The scheme to authenticate with' } }
          : [409, 429, 503].includes(s)
            ? { 'retry-after': RETRY_AFTER }
            : undefined;
      return [s, { ...OpenAiErrorBody, description: STATUS_TEXT[s] ?? 'Error', ...(headers ? { headers } : {}) }];
    }),
  );
}

interface OpenAiAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: OpenAiErrorBody;
}

const answer = (status: number, message: string, type: string, param: string | null, code: string | null, headers: Record<string, string> = {}): OpenAiAnswer => ({
  status,
  headers,
  body: { error: { message, type, param, code } },
});

/**
 * OpenAI's SDKs retry a 429 or 5xx on their own unless the answer says `x-should-retry: false`
 * (openai-node's `shouldRetry`), and they send no Idempotency-Key of their own: their retry of a
 * create is a new create. Said of a balance or a token's budget too low (retrying cannot help)
 * and of every 5xx of a /v1 POST: such a POST creates jobs (an edit, assets too), and its 5xx may
 * come once they exist (a job failed or was cancelled, the wait ran out, an output could not be
 * read), so a retry would create, run and bill them again.
 */
const NO_RETRY = { 'x-should-retry': 'false' };

/** A catalogue refusal as OpenAI shows it. */
export function openAiAnswerOf(err: DomainError): OpenAiAnswer {
  const code = err.details.fields?.code;
  const ownCode = typeof code === 'string' ? code : null;
  const headers = headersOf(err);
  const param = paramOf(err);
  const byCode: Partial<Record<ErrorCode, () => OpenAiAnswer>> = {
    unauthenticated: () => answer(401, err.message, 'invalid_request_error', null, 'invalid_api_key', { ...headers, 'www-authenticate': 'Bearer realm="mediagen"' }),
    invalid_request: () => answer(400, err.message, 'invalid_request_error', param, ownCode),
    not_found: () => answer(404, err.message, 'invalid_request_error', param, ownCode ?? 'not_found'),
    route_not_found: () => answer(404, err.message, 'invalid_request_error', null, 'unknown_url'),
    // A sunset model is one OpenAI's clients cannot have: 404 as for any model they cannot use.
    model_unavailable: () => answer(404, `The model is no longer available: ${err.message}`, 'invalid_request_error', 'model', 'model_not_found'),
    insufficient_balance: () => answer(429, err.message, 'insufficient_quota', null, 'insufficient_quota', { ...headers, ...NO_RETRY }),
    // The native 402 of a token's own budget: OpenAI's clients know a spent quota as this 429 only.
    token_budget_exceeded: () => answer(429, err.message, 'insufficient_quota', null, 'token_budget_exceeded', { ...headers, ...NO_RETRY }),
    too_many_jobs: () => answer(429, err.message, 'requests', null, 'rate_limit_exceeded', headers),
    too_many_streams: () => answer(429, err.message, 'requests', null, 'rate_limit_exceeded', headers),
  };
  const special = byCode[err.code];
  if (special) return special();
  const status = statusOf(err);
  return answer(status, err.message, status >= 500 ? 'server_error' : 'invalid_request_error', param, ownCode ?? err.code, headers);
}

/** A job that ended badly, or a wait that ran out: a 5xx whose `code` is the job's. */
export function openAiOutcomeAnswer(err: JobOutcomeError): OpenAiAnswer {
  return answer(err.kind === 'timeout' ? 504 : 500, err.message, 'server_error', null, err.code);
}

export function sendOpenAiError(reply: FastifyReply, err: DomainError | JobOutcomeError): FastifyReply {
  const a = err instanceof JobOutcomeError ? openAiOutcomeAnswer(err) : openAiAnswerOf(err);
  // Refused before its body arrived (401, 413...): close after the answer, as the native door does (error-handler.ts).
  if (reply.request?.raw && !reply.request.raw.complete) {
    reply.header('connection', 'close');
    lingerAfterAnswer(reply.request.raw);
  }
  const noRetry = a.status >= 500 && reply.request?.method === 'POST' ? NO_RETRY : {};
  return reply.code(a.status).headers({ ...a.headers, ...noRetry }).type('application/json; charset=utf-8').send(a.body);
}

/**
 * Registers `routes` under /v1 in a scope whose errors, 404s included, are OpenAI's. The routes
 * of the images, models and videos doors each add themselves through `routes`.
 */
export async function registerOpenAiScope(app: FastifyInstance, routes: (scope: FastifyInstance) => void | Promise<void>): Promise<void> {
  await app.register(
    async (scope) => {
      scope.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
        if (err instanceof JobOutcomeError) return sendOpenAiError(reply, err);
        const fault = err instanceof DomainError ? undefined : infraFault(err);
        const appErr = toDomainError(err, request.routeOptions.bodyLimit, request.method, request.routeOptions.config.stores, fault);
        if (fault) request.log.error({ alert: INFRA_FAULT_ALERT, errno: fault.code, kind: fault.kind }, 'infrastructure fault under a request');
        if (statusOf(appErr) >= 500) logFailure(request.log, err, 'request failed');
        return sendOpenAiError(reply, appErr);
      });
      scope.setNotFoundHandler((request, reply) => {
        const path = request.url.split('?')[0]!.slice(0, 200);
        return sendOpenAiError(reply, new DomainError('route_not_found', `no route ${request.method} ${path} in this server's OpenAI-compatible API`));
      });
      await routes(scope);
    },
    { prefix: OPENAI_PREFIX },
  );
}
