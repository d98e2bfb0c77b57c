import type { LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { checkedInject } from './checked-inject.js';
import { PUBLIC_URL, createTestApp, generate } from './app.js';
import type { Json, TestApp } from './app.js';

/** The model the worker-protocol tests bind to a remote pool, and its pool. */
export const REMOTE_MODEL = 'image/vendor-a/model-a-2/medium';
export const POOL = 'gpu-a';

type AppOptions = NonNullable<Parameters<typeof createTestApp>[0]>;

/** A test app whose `REMOTE_MODEL` (and `more`) is bound to `remote:gpu-a`. */
export function remoteApp(opts: AppOptions = {}, more: readonly string[] = []): Promise<TestApp> {
  const modelEngines = Object.fromEntries([REMOTE_MODEL, ...more].map((m) => [m, `remote:${POOL}`]));
  return createTestApp({ ...opts, modelEngines: { ...modelEngines, ...opts.modelEngines } });
}

/** A new worker token's secret. */
export async function workerToken(t: TestApp, models: readonly string[] = []): Promise<string> {
  return (await t.services.workerTokens.create('test worker', models)).token;
}

/** A worker protocol call with a JSON body, checked against its route's declared answers. */
export function wpost(t: TestApp, token: string, path: string, body: unknown): Promise<LightMyRequestResponse> {
  return checkedInject(t.app, {
    method: 'POST',
    url: `/worker/v1${path}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
}

/** PUT an output file's bytes. */
export function wput(t: TestApp, token: string, jobId: string, name: string, leaseId: string, bytes: Buffer, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return checkedInject(t.app, {
    method: 'PUT',
    url: `/worker/v1/jobs/${jobId}/outputs/${name}?lease_id=${encodeURIComponent(leaseId)}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', ...headers },
    payload: bytes,
  });
}

export interface Claimed {
  id: string;
  model: string;
  request: Json;
  attempt: number;
  lease_id: string;
  lease_expires_at: string;
  deadline: string;
  inputs: Record<string, string>;
  styles: Record<string, Json>;
  upload_url: string;
}

/** Claims without waiting; returns the jobs. */
export async function claimNow(t: TestApp, token: string, body: Json = {}): Promise<Claimed[]> {
  const res = await wpost(t, token, '/claim', { wait_ms: 0, ...body });
  if (res.statusCode !== 200) throw new Error(`claim: ${res.statusCode} ${res.body}`);
  return (res.json() as { jobs: Claimed[] }).jobs;
}

/** Creates a job of the remote model; returns its id. */
export async function remoteJob(t: TestApp, body: Json = {}, model = REMOTE_MODEL): Promise<string> {
  const res = await generate(t, model, { prompt: 'a lighthouse at dusk', aspect_ratio: '1:1', resolution: '1K', ...body });
  if (res.statusCode !== 200) throw new Error(`generate: ${res.statusCode} ${res.body}`);
  return (res.json() as { job_id: string }).job_id;
}

/** A real PNG of this size (sharp), so the bytes are what the name says. */
export function png(width = 8, height = 8): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#3060c0' } }).png().toBuffer();
}

/** The path and query of an absolute URL on the test app. */
export const pathOf = (url: string): string => {
  if (!url.startsWith(PUBLIC_URL)) throw new Error(`${url} is not on ${PUBLIC_URL}`);
  return url.slice(PUBLIC_URL.length);
};

/** claim -> progress -> upload -> complete, for one job the token can take; returns the claim. */
export async function runRemotely(t: TestApp, token: string, bytes: Buffer, name = 'output.png'): Promise<Claimed> {
  const [job] = await claimNow(t, token);
  if (!job) throw new Error('nothing to claim');
  const steps: [string, LightMyRequestResponse][] = [
    ['progress', await wpost(t, token, `/jobs/${job.id}/progress`, { lease_id: job.lease_id, status: 'sampling', fraction: 0.5 })],
    ['upload', await wput(t, token, job.id, name, job.lease_id, bytes)],
    ['complete', await wpost(t, token, `/jobs/${job.id}/complete`, { lease_id: job.lease_id, outputs: [{ name }] })],
  ];
  for (const [what, res] of steps) if (res.statusCode >= 300) throw new Error(`${what}: ${res.statusCode} ${res.body}`);
  return job;
}
