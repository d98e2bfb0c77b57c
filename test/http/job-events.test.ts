import { Agent, fetch } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, del, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';
import { openEvents } from '../helpers/sse.js';
import type { SseItem, SseStream } from '../helpers/sse.js';
import { B1, MINIMAL } from './generate-support.js';

type Event = Extract<SseItem, { kind: 'event' }>;

/**
 * GET /jobs/{id}/events over real HTTP on loopback: every status in order, the end, resuming
 * after Last-Event-ID, deletion, heartbeats on the injected clock, the per-workspace cap, and
 * the stream ending when its client or the server goes.
 */
describe.each(backends)('GET /jobs/{id}/events on $name', (backend) => {
  let t: TestApp;
  let engine: ScriptedEngine;
  let base: string;
  const streams: SseStream[] = [];

  beforeEach(async () => {
    engine = new ScriptedEngine();
    engine.hold = deferred();
    t = await createTestApp({ backend, worker: { engine, concurrency: 2 }, waits: { streamsPerWorkspace: 2 } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    engine.hold?.resolve();
    await t.close();
  });

  const create = async (token = t.token): Promise<string> => ((await generate(t, B1, MINIMAL[B1], {}, token)).json() as Json).job_id as string;
  const open = async (id: string, headers: Record<string, string> = {}, token = t.token, query = '') => {
    const s = await openEvents(base, `/jobs/${id}/events${query}`, token, headers);
    streams.push(s);
    return s;
  };
  const release = () => {
    const hold = engine.hold!;
    engine.hold = undefined;
    hold.resolve();
  };
  const sampling = (id: string) => waitFor(async () => engine.sampling.includes(id), `job ${id} to sample`);
  const statuses = (events: Event[]) => events.map((e) => `${e.event}:${e.data.status as string}`);
  const holding = () => t.services.waits.holding(t.workspaceId);

  it('sends every status in order, the terminal one as end with the job as GET shows it, then closes', async () => {
    const id = await create();
    const s = await open(id);
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(s.res.headers.get('cache-control')).toBe('no-store');
    expect(s.res.headers.get('x-request-id')).toBeTruthy();
    expect(await s.next()).toEqual({ kind: 'comment', text: 'ping' });
    const early = await s.eventsUntil((e) => e.data.status === 'sampling');
    await sampling(id);
    release();
    const rest = await s.eventsUntil((e) => e.event === 'end');
    const events = [...early, ...rest];
    expect(statuses(events)).toEqual(['status:queued', 'status:scheduled', 'status:processing', 'status:sampling', 'status:intermediate-complete', 'end:completed']);
    const ids = events.map((e) => Number(e.id));
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]!);
    expect(events.at(-1)!.data).toEqual((await get(t, `/jobs/${id}`)).json());
    for (const e of events) expect(e.data).toMatchObject({ job_id: id, type: B1 });
    // Closed after the end: nothing more, and the stream is let go.
    expect(await s.next()).toBeUndefined();
    await waitFor(async () => holding().streams === 0, 'the stream to be let go');
  });

  it('resumes after Last-Event-ID (or ?last_event_id=) without loss or repeats; after the end, 204', async () => {
    const id = await create();
    const first = await open(id);
    const seen = await first.eventsUntil((e) => e.data.status === 'sampling');
    first.close();
    await sampling(id);
    release();
    await waitFor(async () => ((await get(t, `/jobs/${id}`)).json() as Json).status === 'completed', 'the job to complete');
    const resumed = await open(id, { 'last-event-id': seen.at(-1)!.id! });
    const rest = await resumed.eventsUntil((e) => e.event === 'end');
    expect(statuses(rest)).toEqual(['status:intermediate-complete', 'end:completed']);
    // A status already left when sent: the job then, without what came later.
    expect(rest[0]!.data).toEqual({ job_id: id, type: B1, status: 'intermediate-complete', created_at: expect.any(String) });
    expect(Number(rest[0]!.id)).toBeGreaterThan(Number(seen.at(-1)!.id));
    // The query parameter for clients that cannot set the header; the header wins over it.
    const byQuery = await open(id, {}, t.token, `?last_event_id=${seen[1]!.id!}`);
    expect(statuses(await byQuery.eventsUntil((e) => e.event === 'end'))).toEqual([
      'status:processing',
      'status:sampling',
      'status:intermediate-complete',
      'end:completed',
    ]);
    const both = await open(id, { 'last-event-id': rest[0]!.id! }, t.token, `?last_event_id=${seen[0]!.id!}`);
    expect(statuses(await both.eventsUntil((e) => e.event === 'end'))).toEqual(['end:completed']);
    const after = await fetch(new URL(`/jobs/${id}/events`, base), { headers: { authorization: `Bearer ${t.token}`, 'last-event-id': rest.at(-1)!.id! } });
    expect(after.status).toBe(204);
    expect(await after.text()).toBe('');
  });

  it('sends deleted and closes when the job is deleted while streaming', async () => {
    const id = await create();
    const s = await open(id);
    await s.eventsUntil((e) => e.data.status === 'sampling');
    expect((await del(t, `/jobs/${id}`)).statusCode).toBe(200);
    const last = await s.eventsUntil(() => false);
    expect(last.at(-1)).toEqual({ kind: 'event', id: undefined, event: 'deleted', data: { id } });
    expect(last.filter((e) => e.event !== 'deleted').every((e) => e.event === 'status' && e.data.status !== 'completed')).toBe(true);
  });

  it('sends a ping after 15 s of the injected clock without an event', async () => {
    const id = await create();
    const s = await open(id);
    await s.eventsUntil((e) => e.data.status === 'sampling');
    t.clock.advance(15_000);
    expect(await s.next()).toEqual({ kind: 'comment', text: 'ping' });
    t.clock.advance(15_000);
    expect(await s.next()).toEqual({ kind: 'comment', text: 'ping' });
    release();
    expect(statuses(await s.eventsUntil((e) => e.event === 'end')).at(-1)).toBe('end:completed');
  });

  it('answers errors before streaming: 404 as GET does, 400 for a malformed Last-Event-ID', async () => {
    const id = await create();
    const other = await t.newWorkspace('other');
    expect(errorOf(await checkedInject(t.app, { url: `/jobs/${id}/events`, headers: { authorization: `Bearer ${other.token}` } }), 404)).toBe(`job '${id}' not found`);
    expect(errorOf(await checkedInject(t.app, { url: '/jobs/nope/events', headers: { authorization: `Bearer ${t.token}` } }), 404)).toBe("job 'nope' not found");
    const bad = await checkedInject(t.app, { url: `/jobs/${id}/events`, headers: { authorization: `Bearer ${t.token}`, 'last-event-id': 'abc' } });
    expect(errorOf(bad, 400)).toMatch(/Last-Event-ID/);
    expect(errorOf(await checkedInject(t.app, { url: `/jobs/${id}/events?last_event_id=x`, headers: { authorization: `Bearer ${t.token}` } }), 400)).toMatch(/last_event_id/);
    expect((await checkedInject(t.app, { url: `/jobs/${id}/events` })).statusCode).toBe(401);
    expect(holding().streams).toBe(0);
  });

  it('holds at most the cap of streams per workspace (429 with Retry-After), others unaffected; a closed stream frees its place', async () => {
    const id = await create();
    const a = await open(id);
    const b = await open(id);
    await a.next();
    await b.next();
    const refused = await fetch(new URL(`/jobs/${id}/events`, base), { headers: { authorization: `Bearer ${t.token}` } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as Json).error).toMatch(/2 open job event streams/);
    const other = await t.newWorkspace('other');
    const theirs = await create(other.token);
    const c = await open(theirs, {}, other.token);
    expect(c.res.status).toBe(200);
    a.close();
    await waitFor(async () => holding().streams === 1, 'the closed stream to be let go');
    const again = await open(id);
    expect(again.res.status).toBe(200);
  });

  it('answers 429 past the process maximum of streams, all workspaces together', async () => {
    await t.close();
    engine = new ScriptedEngine();
    engine.hold = deferred();
    t = await createTestApp({ backend, worker: { engine, concurrency: 2 }, waits: { streamsPerWorkspace: 2, streamsPerProcess: 2 } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const other = await t.newWorkspace('other');
    const id = await create();
    await (await open(id)).next();
    await (await open(await create(other.token), {}, other.token)).next();
    expect(t.services.waits.holding()).toEqual({ waits: 0, streams: 2 });
    const refused = await fetch(new URL(`/jobs/${id}/events`, base), { headers: { authorization: `Bearer ${t.token}` } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as Json).error).toMatch(/this server already has 2 open job event streams/);
  });

  it('lets the place go when the client leaves during the first read', async () => {
    const id = await create();
    const jobs = t.store.jobs as { transitions: (...a: unknown[]) => Promise<unknown> };
    const read = jobs.transitions.bind(jobs);
    const entered = deferred();
    const gate = deferred();
    let calls = 0;
    jobs.transitions = async (...a: unknown[]) => {
      if (++calls === 1) {
        entered.resolve();
        await gate.promise;
      }
      return read(...a);
    };
    const client = new AbortController();
    const res = fetch(new URL(`/jobs/${id}/events`, base), { headers: { authorization: `Bearer ${t.token}` }, signal: client.signal, dispatcher: new Agent({ pipelining: 0 }) }).catch(() => undefined);
    await entered.promise;
    client.abort();
    await new Promise((r) => setTimeout(r, 100));
    gate.resolve();
    await res;
    await new Promise((r) => setTimeout(r, 200));
    expect(holding().streams).toBe(0);
  });

  it('lets the place go when the stream is closed before its first event is asked for', async () => {
    const id = await create();
    const auth = await t.services.identity.authenticate(`Bearer ${t.token}`);
    const events = await t.services.waits.stream(auth, id, 0, new AbortController().signal);
    expect(holding().streams).toBe(1);
    await events!.return(undefined);
    expect(holding().streams).toBe(0);
  });

  it('ends once the job ends when Last-Event-ID is past its last id, and a reconnect gets 204', async () => {
    const id = await create();
    const s = await open(id, { 'last-event-id': '999999999' });
    expect(s.res.status).toBe(200);
    release();
    expect(await s.eventsUntil(() => false)).toEqual([]);
    expect(((await get(t, `/jobs/${id}`)).json() as Json).status).toBe('completed');
    await waitFor(async () => holding().streams === 0, 'the stream to be let go');
    const again = await fetch(new URL(`/jobs/${id}/events`, base), { headers: { authorization: `Bearer ${t.token}`, 'last-event-id': '999999999' } });
    expect(again.status).toBe(204);
  });

  it('is not cut by request_timeout_ms, and ends at once with event: reconnect when the server closes', async () => {
    await t.close();
    engine = new ScriptedEngine();
    engine.hold = deferred();
    t = await createTestApp({
      backend,
      worker: { engine },
      http: { limits: { requestTimeoutMs: 200, headersTimeoutMs: 200, keepAliveTimeoutMs: 200, maxConnections: 50, lingerMs: 1000, lingerBytes: 1 << 20 } },
    });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const id = await create();
    const s = await open(id);
    await s.eventsUntil((e) => e.data.status === 'sampling');
    // Several of the server's timeout checks pass; the stream stays open (real time, on purpose).
    await new Promise((r) => setTimeout(r, 1000));
    t.clock.advance(15_000);
    expect(await s.next()).toEqual({ kind: 'comment', text: 'ping' });
    const closing = t.app.close();
    // The last word is not the job's end: reconnect (elsewhere) with Last-Event-ID, after `retry`.
    const last = await s.eventsUntil(() => false);
    expect(last).toEqual([{ kind: 'event', id: undefined, event: 'reconnect', data: { reason: 'server_closing' }, retry: '1000' }]);
    await closing;
  });
});
