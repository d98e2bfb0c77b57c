import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.js';
import type { Readiness } from '../../services/readiness.js';

const Checks = Type.Object({ store: Type.String(), migrations: Type.String(), disk: Type.String() });

/** 503 of /readyz: the first failing check in words, and every check's verdict. */
const NotReady = Type.Object({ error: Type.String({ minLength: 1 }), checks: Checks }, { description: 'Not ready' });

/**
 * Health for load balancers and orchestrators, without auth and out of the API document:
 * `/healthz` says the process answers, `/readyz` that it can do its work.
 */
export function registerHealth(fastify: FastifyInstance, readiness: Readiness): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/healthz',
    { config: { public: true }, schema: { hide: true, response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        hide: true,
        response: {
          200: Type.Object({ status: Type.Literal('ready'), checks: Checks }),
          503: { ...NotReady, headers: { 'retry-after': { type: 'string', pattern: '^[0-9]+$' } } },
        },
      },
    },
    async () => {
      const report = await readiness.check();
      if (!report.ready) {
        const failing = Object.entries(report.checks).filter(([, v]) => v !== 'ok');
        const [name, verdict] = failing[0]!;
        throw new DomainError('unavailable', `not ready: ${name} ${verdict}`, {
          fields: { checks: report.checks },
          retryAfterSeconds: 5,
        });
      }
      return { status: 'ready' as const, checks: report.checks };
    },
  );
}
