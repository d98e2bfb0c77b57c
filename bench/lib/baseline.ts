import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';

/**
 * The bare Fastify server every HTTP figure is divided by: a GET answering a fixed JSON object of
 * a job's size (the job the API serves in the same run) and a POST parsing a JSON body of a
 * generation request's size. No auth, no store: what Fastify and loopback cost on this machine now.
 */
export interface Baseline {
  readonly url: string;
  close(): Promise<void>;
}

export async function startBaseline(jobJson: unknown): Promise<Baseline> {
  const app: FastifyInstance = Fastify();
  app.get('/job', async () => jobJson);
  app.post('/job', async (req) => ({ echo: (req.body as { prompt?: string }).prompt ?? null }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { url, close: () => app.close() };
}
