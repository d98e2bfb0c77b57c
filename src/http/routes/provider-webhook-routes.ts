import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/error-catalogue.js';

/** What the route needs: the receiver built with the provider engines (engines/providers/provider-webhooks.ts). */
export interface ProviderWebhookReceiver {
  receive(name: string, headers: Readonly<Record<string, string | undefined>>, rawBody: Buffer, log?: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void }): Promise<'accepted' | 'refused' | 'unknown'>;
}

/** A provider's webhook is small JSON: a prediction, a fal result notice. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/**
 * `POST /providers/{name}/webhook`: where Replicate and fal call back (docs/providers.md). Signed by
 * the provider, not authenticated by a token; the body is kept raw, as the signature covers its
 * bytes. Out of the API document: no client calls it.
 */
export function registerProviderWebhookRoute(fastify: FastifyInstance, receiver: ProviderWebhookReceiver): void {
  void fastify.register(async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_req, body, done) => done(null, body));
    app.post<{ Params: { name: string } }>(
      '/providers/:name/webhook',
      { config: { public: true }, bodyLimit: WEBHOOK_BODY_LIMIT, schema: { hide: true } },
      async (request, reply) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
        const verdict = await receiver.receive(request.params.name, headers, raw, request.log);
        if (verdict === 'unknown') throw new DomainError('not_found', `no provider '${request.params.name}' takes webhooks here`);
        if (verdict === 'refused') throw new DomainError('unauthenticated', 'the webhook signature does not verify');
        return reply.code(200).send({ received: true });
      },
    );
  });
}
