import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.js';
import type { Readiness } from '../../services/readiness.js';

const Checks = Type.Object({ store: Type.String(), migrations: Type.String(), disk: Type.String() });

/**
 * Health for load balancers and orchestrators, without auth and out of the API document:
 * `/healthz` says the process answers, `/readyz` that it can do its work.
 */
export function registerHealth(app: FastifyInstance, readiness: Readiness): void {
  app.get('/healthz', { config: { public: true }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    { config: { public: true }, schema: { hide: true, response: { 200: Type.Object({ status: Type.Literal('ready'), checks: Checks }) } } },
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
      return { status: 'ready', checks: report.checks };
    },
  );
}
