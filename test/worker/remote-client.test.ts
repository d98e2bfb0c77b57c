import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import { systemClock } from '../../src/lib/clock.js';
import type { JobStopped} from '../../src/worker/remote/protocol-client.js';
import { ProtocolError, ServerUnreachable, WorkerClient } from '../../src/worker/remote/protocol-client.js';
import { remoteInputLoader } from '../../src/worker/remote/inputs.js';
import { FakeWorkerServer } from '../helpers/fake-worker-server.js';

let server: FakeWorkerServer;
let client: WorkerClient;
const signal = new AbortController().signal;

beforeEach(async () => {
  server = await new FakeWorkerServer().start();
  client = new WorkerClient({ server: new URL(server.url), token: server.token, clock: systemClock, retry: { attempts: 4, baseMs: 5, maxMs: 20 } });
});

afterEach(() => server.close());

const job = (inputs: Record<string, string>, request: Record<string, unknown> = {}) => ({ request, inputs });

describe('worker protocol client', () => {
  it('retries a job call on 502 and 429, then takes the answer', async () => {
    const statuses = [502, 429];
    server.handle = (c) => (c.path.endsWith('/progress') && statuses.length > 0 ? { status: statuses.shift()!, body: { error: 'later' }, headers: { 'retry-after': '0' } } : undefined);
    const answer = await client.progress('j1', { lease_id: 'l1', status: 'processing' });
    expect(answer.status).toBe('processing');
    expect(server.seen('progress', 'j1')).toHaveLength(3);
  });

  it('does not retry a 400, and words it with the server’s error', async () => {
    server.handle = () => ({ status: 400, body: { error: 'status must be processing, sampling or intermediate-complete' } });
    const err = await client.progress('j1', { lease_id: 'l1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as ProtocolError).status).toBe(400);
    expect((err as Error).message).toContain('status must be processing');
    expect(server.calls).toHaveLength(1);
  });

  it('a 409 is a JobStopped carrying the reason (lease_lost when it names none)', async () => {
    server.handle = () => ({ status: 409, body: { error: 'the job timed out', reason: 'timeout' } });
    expect(await client.complete('j1', { lease_id: 'l1', outputs: [] }).catch((e: JobStopped) => e.reason)).toBe('timeout');
    server.handle = () => ({ status: 409, body: { error: 'gone' } });
    expect(await client.fail('j1', { lease_id: 'l1', code: 'engine_failed', message: 'x' }).catch((e: JobStopped) => e.reason)).toBe('lease_lost');
  });

  it('gives up with ServerUnreachable when nothing answers', async () => {
    const url = server.url;
    await server.close();
    const offline = new WorkerClient({ server: new URL(url), token: 'mgw_x', clock: systemClock, retry: { attempts: 2, baseMs: 1, maxMs: 2 } });
    await expect(offline.progress('j1', { lease_id: 'l1' })).rejects.toBeInstanceOf(ServerUnreachable);
  });

  it('uploads a file streamed from disk to the server it was pointed at, whatever origin upload_url names', async () => {
    const path = join(tmpdir(), `upload-${process.pid}.png`);
    await writeFile(path, Buffer.alloc(200_000, 7));
    const answer = await client.upload({ upload_url: 'https://public.example.com/api/worker/v1/jobs/j1/outputs/', lease_id: 'l 1' }, 'out put.png', path, 'image/png', signal);
    expect(answer.size).toBe(200_000);
    const put = server.calls.find((c) => c.method === 'PUT')!;
    expect(put.path).toBe('/worker/v1/jobs/j1/outputs/out%20put.png');
    expect(put.query.get('lease_id')).toBe('l 1');
    expect(put.authorization).toBe('Bearer mgw_test');
    expect(put.bytes.equals(Buffer.alloc(200_000, 7))).toBe(true);
    await rm(path);
  });

  it('keeps a path prefix of the server URL', () => {
    const prefixed = new WorkerClient({ server: new URL('https://10.0.0.5:8443/mediagen/'), token: 'mgw_x', clock: systemClock });
    expect(prefixed.rebase('https://api.example.com/worker/v1/jobs/j/inputs/0?exp=1&sig=ab')).toBe('https://10.0.0.5:8443/mediagen/worker/v1/jobs/j/inputs/0?exp=1&sig=ab');
  });
});

describe('inputs of a remote job', () => {
  const limits = { maxBytes: 1024, timeoutMs: 5000 };

  it('decodes data: URIs here, and refuses a malformed one as input_invalid', async () => {
    const load = remoteInputLoader(client, job({}), limits);
    expect((await load('data:text/plain;base64,aGVsbG8=', 'image_url', signal)).toString()).toBe('hello');
    const err = await load('data:image/png;base64,@@@', 'image_url', signal).then(() => { throw new Error('expected a refusal'); }, (e: EngineError) => e);
    expect(err).toMatchObject({ code: 'input_invalid' });
    expect(err.message).toMatch(/^image_url: data: URI is malformed/);
    expect(server.calls).toEqual([]);
  });

  it('reads an http(s) input through its signed URL, without the token', async () => {
    server.handle = (c) => (c.path.includes('/inputs/') ? Buffer.from('image bytes') : undefined);
    const signed = `${server.url}/worker/v1/jobs/j1/inputs/0?exp=9&tok=t&sig=ab`;
    const load = remoteInputLoader(client, job({ image_url: signed }), limits);
    expect((await load('https://example.com/cat.png', 'image_url', signal)).toString()).toBe('image bytes');
    expect(server.calls[0]!.authorization).toBeUndefined();
    expect(server.calls[0]!.query.get('sig')).toBe('ab');
  });

  it('finds the signed URL by the request field holding the URL when the engine names the field its own way', async () => {
    server.handle = (c) => (c.path.endsWith('/inputs/1') ? Buffer.from('second') : undefined);
    const request = { image_prompts: [{ url: 'https://a.example/1.png' }, { url: 'https://a.example/2.png' }] };
    const load = remoteInputLoader(client, job({ 'image_prompts[0].url': `${server.url}/worker/v1/jobs/j/inputs/0`, 'image_prompts[1].url': `${server.url}/worker/v1/jobs/j/inputs/1` }, request), limits);
    expect((await load('https://a.example/2.png', 'reference 2', signal)).toString()).toBe('second');
  });

  it("maps the server's refusal to the job error it names, without asking again", async () => {
    server.handle = () => ({ status: 502, body: { error: 'image_url: the input from example.com answered HTTP 404', code: 'input_fetch_failed' } });
    const load = remoteInputLoader(client, job({ image_url: `${server.url}/worker/v1/jobs/j/inputs/0` }), limits);
    const err = await load('https://example.com/x.png', 'image_url', signal).then(() => { throw new Error('expected a refusal'); }, (e: EngineError) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect({ code: err.code, message: err.message }).toEqual({ code: 'input_fetch_failed', message: 'image_url: the input from example.com answered HTTP 404' });
    // The server's word on the origin: asked once, not retried like a fault of the server's own.
    expect(server.calls).toHaveLength(1);
    server.handle = () => ({ status: 400, body: { error: 'not an image', code: 'input_invalid' } });
    expect(await load('https://example.com/x.png', 'image_url', signal).catch((e: EngineError) => [e.code, e.message])).toEqual(['input_invalid', 'image_url: not an image']);
  });

  it('caps the download at input_max_bytes', async () => {
    server.handle = () => Buffer.alloc(2000);
    const load = remoteInputLoader(client, job({ image_url: `${server.url}/worker/v1/jobs/j/inputs/0` }), limits);
    const err = await load('https://example.com/x.png', 'image_url', signal).then(() => { throw new Error('expected a refusal'); }, (e: EngineError) => e);
    expect({ code: err.code, message: err.message }).toEqual({ code: 'input_fetch_failed', message: 'image_url: the input is larger than 1 KiB' });
  });

  it('an input with no signed URL and a job the server no longer serves fail as input_fetch_failed; a refused signature is the engine’s fault', async () => {
    const none = remoteInputLoader(client, job({}), limits);
    expect(await none('https://example.com/x.png', 'image_url', signal).catch((e: EngineError) => e.code)).toBe('input_fetch_failed');
    server.handle = () => ({ status: 404, body: { error: 'not found' } });
    const gone = remoteInputLoader(client, job({ image_url: `${server.url}/worker/v1/jobs/j/inputs/0` }), limits);
    expect(await gone('https://example.com/x.png', 'image_url', signal).catch((e: EngineError) => e.message)).toBe('image_url: the server no longer serves this input');
    server.handle = () => ({ status: 403, body: { error: 'bad signature' } });
    expect(await gone('https://example.com/x.png', 'image_url', signal).catch((e: EngineError) => e.code)).toBe('engine_failed');
  });
});
