import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Mediagen, MediagenError } from '../../packages/client/src/index.js';
import type { Job } from '../../packages/client/src/index.js';
import { job, sendJson, startStub } from './stub.js';
import type { Stub } from './stub.js';

const ID = '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69';
const EVENTS = `/jobs/${ID}/events`;

let stub: Stub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

function openStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  res.write(': ping\n\n');
}
const event = (id: number, name: string, body: unknown) => `id: ${id}\nevent: ${name}\ndata: ${JSON.stringify(body)}\n\n`;

describe('jobs.wait and jobs.watch (a local stub server)', () => {
  it('follows the event stream, resumes with Last-Event-ID after a cut, and reports each change once', async () => {
    stub = await startStub((req, res, n) => {
      expect(req.url).toBe(EVENTS);
      openStream(res);
      if (n === 0) {
        res.write(event(1, 'status', job('queued')));
        res.write(event(2, 'status', job('processing')));
        res.end(); // cut before the end
      } else {
        // The server resumes after the id it was given; one repeat is harmless.
        res.write(event(2, 'status', job('processing')));
        res.end(event(3, 'end', job('completed', { completed_at: '2026-11-22T12:00:04.000000Z', result: { urls: ['http://x/outputs/k/output.png'] } })));
      }
    });
    const seen: string[] = [];
    const done = await new Mediagen({ baseUrl: stub.url, token: 't' }).jobs.wait(ID, { onUpdate: (j) => seen.push(j.status) });
    expect(done.status).toBe('completed');
    expect(seen).toEqual(['queued', 'processing', 'completed']);
    expect(stub.seen.map((s) => s.headers['last-event-id'])).toEqual([undefined, '2']);
    expect(stub.seen[0]!.headers.accept).toBe('text/event-stream');
    expect(stub.seen[0]!.headers.authorization).toBe('Bearer t');
  });

  it('reconnects on event: reconnect (a server shutting down) with Last-Event-ID, after its retry, however often, never polling', async () => {
    // More reconnects in a row than the failures that would make it fall back to polling.
    const closings = 7;
    stub = await startStub((req, res, n) => {
      expect(req.url).toBe(EVENTS);
      openStream(res);
      if (n === 0) res.write(event(1, 'status', job('processing')));
      if (n < closings) return res.end('retry: 20\nevent: reconnect\ndata: {"reason":"server_closing"}\n\n');
      res.end(event(2, 'end', job('completed', { completed_at: '2026-11-22T12:00:04.000000Z', result: { urls: ['http://x/outputs/k/output.png'] } })));
    });
    const seen: string[] = [];
    const done = await new Mediagen({ baseUrl: stub.url, token: 't' }).jobs.wait(ID, { onUpdate: (j) => seen.push(j.status) });
    expect(done.status).toBe('completed');
    expect(seen).toEqual(['processing', 'completed']);
    expect(stub.seen.map((s) => s.url)).toEqual(Array(closings + 1).fill(EVENTS));
    expect(stub.seen.map((s) => s.headers['last-event-id'])).toEqual([undefined, ...Array(closings).fill('1')]);
  });

  it("clamps a server's retry: 0 on reconnect events to at least 250 ms, so a broken server cannot spin the client", async () => {
    stub = await startStub((req, res, n) => {
      openStream(res);
      if (n === 0) res.write(event(1, 'status', job('processing')));
      if (n < 3) return res.end('retry: 0\nevent: reconnect\ndata: {"reason":"server_closing"}\n\n');
      res.end(event(2, 'end', job('completed', { completed_at: '2026-11-22T12:00:04.000000Z', result: { urls: ['http://x/outputs/k/output.png'] } })));
    });
    const done = await new Mediagen({ baseUrl: stub.url, token: 't' }).jobs.wait(ID);
    expect(done.status).toBe('completed');
    const gaps = stub.seen.slice(1).map((s, i) => s.at - stub!.seen[i]!.at);
    expect(gaps).toHaveLength(3);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(240);
  });

  it("backs off exponentially after a dropped stream, not by the server's retry: (which is for its reconnect events)", async () => {
    stub = await startStub((req, res, n) => {
      openStream(res);
      if (n === 0) return res.end(`retry: 10\n\n${event(1, 'status', job('processing'))}`); // cut, no reconnect event
      res.end(event(2, 'end', job('completed', { completed_at: '2026-11-22T12:00:04.000000Z', result: { urls: ['http://x/outputs/k/output.png'] } })));
    });
    await new Mediagen({ baseUrl: stub.url, token: 't' }).jobs.wait(ID);
    expect(stub.seen).toHaveLength(2);
    expect(stub.seen[1]!.at - stub.seen[0]!.at).toBeGreaterThanOrEqual(480);
  });

  it('falls back to polling after 60 reconnect events in a row that brought no news', { timeout: 40_000 }, async () => {
    stub = await startStub((req, res) => {
      if (req.url !== EVENTS) return sendJson(res, 200, job('completed', { completed_at: '2026-11-22T12:00:04.000000Z', result: { urls: ['http://x/outputs/k/output.png'] } }));
      openStream(res);
      res.end(`retry: 0\nevent: reconnect\ndata: {"reason":"server_closing"}\n\n`);
    });
    const done = await new Mediagen({ baseUrl: stub.url, token: 't' }).jobs.wait(ID);
    expect(done.status).toBe('completed');
    expect(stub.seen.filter((s) => s.url === EVENTS)).toHaveLength(61);
    expect(stub.seen.at(-1)!.url).toBe(`/jobs/${ID}`);
  });

  it('polls GET /jobs/{id} when the server has no event stream (404 for the route, the job there)', async () => {
    const statuses = ['queued', 'processing', 'processing', 'completed'];
    let polls = 0;
    stub = await startStub((req, res) => {
      if (req.url === EVENTS) return sendJson(res, 404, { error: `no route GET ${EVENTS}` });
      sendJson(res, 200, job(statuses[Math.min(polls++, statuses.length - 1)]!));
    });
    const seen: string[] = [];
    const client = new Mediagen({ baseUrl: stub.url, token: 't' });
    for await (const j of client.jobs.watch(ID, { pollMs: 5, maxPollMs: 20 })) seen.push(j.status);
    expect(seen).toEqual(['queued', 'processing', 'completed']);
    expect(stub.seen.filter((s) => s.url === EVENTS)).toHaveLength(1);
  });

  it('polls at once, without waiting out Retry-After, when the stream is refused with 429', async () => {
    stub = await startStub((req, res) => {
      if (req.url === EVENTS) return sendJson(res, 429, { error: 'too many streams' }, { 'retry-after': '30' });
      sendJson(res, 200, job('completed'));
    });
    const got = await new Mediagen({ baseUrl: stub.url, token: 't' }).jobs.wait(ID);
    expect(got.status).toBe('completed');
    expect(stub.seen.map((s) => s.url)).toEqual([EVENTS, `/jobs/${ID}`]);
  });

  it('a resume answered 204 (the job had ended at Last-Event-ID) ends with the job as GET shows it', async () => {
    stub = await startStub((req, res, n) => {
      if (n === 0) {
        openStream(res);
        return res.end(event(4, 'status', job('processing')));
      }
      if (req.url === EVENTS) {
        res.writeHead(204);
        return res.end();
      }
      sendJson(res, 200, job('completed', { completed_at: '2026-11-22T12:00:04.000000Z' }));
    });
    const seen: string[] = [];
    const got = await new Mediagen({ baseUrl: stub.url, token: 't' }).jobs.wait(ID, { onUpdate: (j) => seen.push(j.status) });
    expect(got.status).toBe('completed');
    expect(seen).toEqual(['processing', 'completed']);
    expect(stub.seen.map((s) => [s.url, s.headers['last-event-id']])).toEqual([
      [EVENTS, undefined],
      [EVENTS, '4'],
      [`/jobs/${ID}`, undefined],
    ]);
  });

  it('a job deleted while watched (event: deleted) or missing (404 on both routes) is a 404 MediagenError', async () => {
    stub = await startStub((req, res, n) => {
      if (n === 0) {
        openStream(res);
        res.write(event(1, 'status', job('queued')));
        return res.end(`event: deleted\ndata: ${JSON.stringify({ id: ID })}\n\n`);
      }
      sendJson(res, 404, { error: `job '${ID}' not found` });
    });
    const client = new Mediagen({ baseUrl: stub.url, token: 't' });
    const err = await client.jobs.wait(ID).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediagenError);
    expect(err).toMatchObject({ status: 404, message: `job '${ID}' was deleted` });
    await expect(client.jobs.wait(ID)).rejects.toMatchObject({ status: 404, error: `job '${ID}' not found` });
  });

  it('reopens a stream that went silent (no event, no heartbeat) for idleTimeoutMs', async () => {
    stub = await startStub((_req, res, n) => {
      openStream(res);
      if (n === 0) res.write(event(1, 'status', job('processing'))); // then nothing, the connection open
      else res.end(event(2, 'end', job('completed')));
    });
    const got = await new Mediagen({ baseUrl: stub.url, token: 't' }).jobs.wait(ID, { idleTimeoutMs: 100 });
    expect(got.status).toBe('completed');
    expect(stub.seen.map((s) => s.headers['last-event-id'])).toEqual([undefined, '1']);
  });

  it('returns the job as it is when timeoutSeconds runs out first', async () => {
    stub = await startStub((_req, res) => {
      openStream(res);
      res.write(event(1, 'status', job('processing')));
    });
    const got = await new Mediagen({ baseUrl: stub.url, token: 't' }).jobs.wait(ID, { timeoutSeconds: 0.2 });
    expect(got.status).toBe('processing');
  });

  it("generate with wait asks Prefer: wait=N and, when the server did not wait, follows the job's events", async () => {
    const created = job('queued', { completed_at: null, result: null });
    stub = await startStub((req, res) => {
      if (req.method === 'POST') return sendJson(res, 200, created);
      openStream(res);
      res.end(event(5, 'end', job('failed', { completed_at: '2026-11-22T12:00:01.000000Z', error: { code: 'engine_failed' } })));
    });
    const client = new Mediagen({ baseUrl: stub.url, token: 't' });
    const ended: Job = await client.generate('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1', resolution: '1K' }, { wait: true });
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'engine_failed' } });
    expect(stub.seen[0]!.headers.prefer).toBe('wait=60');
    expect(stub.seen[1]!.url).toBe(EVENTS);
    await client.generate('video/vendor-f/model-f', { prompt: 'x' }, { wait: 5, webhookUrl: 'https://hooks.example/x', zeroDataRetention: true });
    expect(stub.seen[2]!.headers).toMatchObject({ prefer: 'wait=5', 'x-webhook-url': 'https://hooks.example/x', 'x-api-zero-data-retention': '1' });
  });

  it('generate returns at once when the server applied the preference and the job ended', async () => {
    stub = await startStub((_req, res) => sendJson(res, 200, job('completed', { completed_at: '2026-11-22T12:00:01.000000Z', result: { urls: ['http://x/o.png'] } }), { 'preference-applied': 'wait=60' }));
    const got = await new Mediagen({ baseUrl: stub.url, token: 't' }).generate('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1', resolution: '1K' }, { wait: true });
    expect(got.status).toBe('completed');
    expect(stub.seen).toHaveLength(1);
  });

  it('generate with wait and onUpdate reports the created status once, then each change', async () => {
    stub = await startStub((req, res) => {
      if (req.method === 'POST') return sendJson(res, 200, job('queued', { completed_at: null, result: null }));
      expect(req.url).toBe(EVENTS);
      openStream(res);
      res.write(event(1, 'status', job('queued')));
      res.write(event(2, 'status', job('processing')));
      res.end(event(3, 'end', job('completed', { completed_at: '2026-11-22T12:00:04.000000Z', result: { urls: ['http://x/outputs/k/output.png'] } })));
    });
    const seen: string[] = [];
    const client = new Mediagen({ baseUrl: stub.url, token: 't' });
    const got = await client.generate('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1', resolution: '1K' }, { wait: true, onUpdate: (j) => seen.push(j.status) });
    expect(got.status).toBe('completed');
    expect(seen).toEqual(['queued', 'processing', 'completed']);
  });
});
