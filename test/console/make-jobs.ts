/**
 * Jobs for the console's browser tests, made through the real API (fetch with the bootstrap
 * token), as any client makes them, and waited for by polling GET /jobs/{id}.
 */
import type { ConsoleServer } from './browser.js';

export interface ApiJob {
  readonly job_id: string;
  readonly type: string;
  readonly status: string;
  readonly created_at: string;
  readonly completed_at?: string;
  readonly result?: { urls?: unknown };
  readonly error?: { code: string; message: string };
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

async function api<T>(srv: ConsoleServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${srv.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${srv.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** POST /generate/{model}: the created job (not waited for). */
export async function createJob(srv: ConsoleServer, model: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<ApiJob> {
  const res = await api<ApiJob & { error?: unknown }>(srv, 'POST', `/generate/${model}`, body, headers);
  if (res.status !== 200) throw new Error(`POST /generate/${model} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function getJob(srv: ConsoleServer, id: string): Promise<{ status: number; body: ApiJob }> {
  return api<ApiJob>(srv, 'GET', `/jobs/${id}`);
}

/** Polls GET /jobs/{id} until the job has ended (or `timeoutMs` passes, which throws). */
export async function waitForEnd(srv: ConsoleServer, id: string, timeoutMs = 30_000): Promise<ApiJob> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await getJob(srv, id);
    if (status !== 200) throw new Error(`GET /jobs/${id} answered ${status}`);
    if (TERMINAL.has(body.status)) return body;
    if (Date.now() > until) throw new Error(`job ${id} still ${body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Creates a job and waits for it to complete (a failure or cancel throws). */
export async function completedJob(srv: ConsoleServer, model: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<ApiJob> {
  const job = await waitForEnd(srv, (await createJob(srv, model, body, headers)).job_id);
  if (job.status !== 'completed') throw new Error(`job ${job.job_id} of ${model} ended ${job.status}: ${JSON.stringify(job.error)}`);
  return job;
}

/** A small PNG (a gradient, so a 3D relief has some depth) as a data URI: an input that needs no fetch. */
export async function pngDataUri(): Promise<string> {
  const { default: sharp } = await import('sharp');
  const width = 32;
  const height = 24;
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      pixels[i] = x * 8;
      pixels[i + 1] = y * 10;
      pixels[i + 2] = 160;
    }
  }
  const png = await sharp(pixels, { raw: { width, height, channels: 3 } }).png().toBuffer();
  return `data:image/png;base64,${png.toString('base64')}`;
}
