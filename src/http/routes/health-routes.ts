import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/error-catalogue.js';
import type { Readiness } from '../../services/upkeep/readiness.js';

const Checks = Type.Object({ store: Type.String(), migrations: Type.String(), disk: Type.String() });

/** Present when some model is bound to a remote pool (docs/workers.md); it never makes /readyz fail. */
const Remote = Type.Object({
  live_workers: Type.Integer({ minimum: 0, description: 'Remote workers seen in the last 60 s, with a token not revoked' }),
  waiting: Type.Array(
    Type.Object({ model: Type.String(), pool: Type.String(), queued: Type.Integer({ minimum: 1, description: 'Queued jobs, counted up to 1000' }) }),
    { description: 'Remote-bound models with queued jobs that no live worker can claim' },
  ),
});

/** The ffmpeg and ffprobe in use: version and where each came from (config, PATH, bundled); never a path. */
const Media = Type.Object({ ffmpeg: Type.String(), ffprobe: Type.String() });

/** Each engine's circuit in this process (docs/routing.md, "Circuits"); absent in a process that runs no jobs. */
const Engines = Type.Array(
  Type.Object({ name: Type.String(), state: Type.Union([Type.Literal('closed'), Type.Literal('half_open'), Type.Literal('open')]) }),
  { description: "Each engine's circuit: closed, half_open (one probe may go) or open (its jobs go to the next engine of their chain, or wait)" },
);

/** 503 of /readyz: the first failing check in words, and every check's verdict (none while draining: nothing is checked). */
const NotReady = Type.Object({ error: Type.String({ minLength: 1 }), checks: Type.Optional(Checks) }, { description: 'Not ready' });

/** Seconds a load balancer is told to wait before asking a process that is not ready again. */
const NOT_READY_RETRY_AFTER_S = 5;

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
          200: Type.Object({ status: Type.Literal('ready'), checks: Checks, remote: Type.Optional(Remote), media: Type.Optional(Media), engines: Type.Optional(Engines) }),
          503: { ...NotReady, headers: { 'retry-after': { type: 'string', pattern: '^[0-9]+$' } } },
        },
      },
    },
    async (request, reply) => {
      // A process shutting down is not ready whatever its checks say, and says so at once. Answered
      // here rather than thrown: a load balancer polls this, and a drain is no failure to log.
      if (readiness.draining) {
        return reply.code(503).header('retry-after', String(NOT_READY_RETRY_AFTER_S)).send({ error: 'not ready: draining (the server is shutting down)' });
      }
      // The request's log: a model waiting for a remote worker is warned about (once a minute).
      const report = await readiness.check(request.log);
      if (!report.ready) {
        const failing = Object.entries(report.checks).filter(([, v]) => v !== 'ok');
        const [name, verdict] = failing[0]!;
        throw new DomainError('unavailable', `not ready: ${name} ${verdict}`, {
          fields: { checks: report.checks },
          retryAfterSeconds: NOT_READY_RETRY_AFTER_S,
        });
      }
      const remote = report.remote && { live_workers: report.remote.liveWorkers, waiting: [...report.remote.waiting] };
      return { status: 'ready' as const, checks: report.checks, ...(remote ? { remote } : {}), ...(report.media ? { media: report.media } : {}), ...(report.engines ? { engines: [...report.engines] } : {}) };
    },
  );
}
