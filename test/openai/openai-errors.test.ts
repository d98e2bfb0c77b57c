import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/error-catalogue.js';
import type { ErrorCode } from '../../src/domain/error-catalogue.js';
import { registerOpenAiScope } from '../../src/http/plugins/openai-errors.js';

/**
 * Which /v1 answers tell OpenAI's SDKs not to retry (`x-should-retry: false`, the one header their
 * `shouldRetry` obeys over the status): a POST may have created jobs before its 5xx, and the SDKs'
 * retry carries no Idempotency-Key, so it would create and bill them again. A GET's 5xx, and
 * refusals made before anything exists, keep the SDKs' own retry rule.
 */
describe("the /v1 scope's retry advice", () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify();
    await registerOpenAiScope(app, (scope) => {
      for (const method of ['GET', 'POST'] as const) {
        scope.route({
          method,
          url: '/fail/:code',
          handler: async (request) => {
            throw new DomainError((request.params as { code: ErrorCode }).code, 'refused');
          },
        });
      }
    });
  });
  afterAll(async () => {
    await app.close();
  });

  const retryAdvice = async (method: 'GET' | 'POST', code: ErrorCode) => {
    const res = await app.inject({ method, url: `/v1/fail/${code}` });
    return { status: res.statusCode, type: (res.json() as { error: { type: string } }).error.type, retry: res.headers['x-should-retry'] };
  };

  it('a 5xx of a POST says x-should-retry: false', async () => {
    expect(await retryAdvice('POST', 'internal')).toEqual({ status: 500, type: 'server_error', retry: 'false' });
    expect(await retryAdvice('POST', 'unavailable')).toEqual({ status: 503, type: 'server_error', retry: 'false' });
    expect(await retryAdvice('POST', 'input_unavailable')).toEqual({ status: 502, type: 'server_error', retry: 'false' });
  });

  it('a 5xx of a GET, and a limit a retry may pass, leave the SDK its own rule; a balance too low says no retry', async () => {
    expect((await retryAdvice('GET', 'internal')).retry).toBeUndefined();
    expect(await retryAdvice('POST', 'too_many_jobs')).toEqual({ status: 429, type: 'requests', retry: undefined });
    expect(await retryAdvice('POST', 'insufficient_balance')).toEqual({ status: 429, type: 'insufficient_quota', retry: 'false' });
  });
});
