import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, generate, get, jobEnd } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { freePort } from '../helpers/free-port.js';
import { memberToken } from '../helpers/members.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { startFakeFal } from '../providers/fakes/fake-fal.js';
import type { FakeFal } from '../providers/fakes/fake-fal.js';
import { clearFalJwksCache } from '../../src/engines/providers/fal-webhook.js';
import { captureLog } from './command-fixtures.js';
import { FAL_TEST_KEY, falModel } from './routing-fixtures.js';

/**
 * What routing promises beyond the chains themselves (docs/routing.md): a job bound to one engine
 * waits out its open circuit, a fallback spends none of the job's attempts, `max_in_flight` spills
 * to the next engine, members see no routing, and a circuit's opening is logged once. A real app
 * and worker on a real store; fal accounts as fakes written from fal's documentation
 * (test/providers/fakes/fake-fal.ts) on loopback, one of them holding each request until released.
 */

const MODEL = 'image/acme/routed-v1';
const CUSTOM = falModel(MODEL, 'provider:a');
const KEY = FAL_TEST_KEY;

interface Route {
  engine: string | null;
  tried: { engine: string; outcome: string }[];
}

describe.each(backends)('routing behaviour: $name', { timeout: 60_000 }, (backend) => {
  let held: FakeFal;
  let quick: FakeFal;
  let t: TestApp | undefined;
  beforeAll(async () => {
    held = await startFakeFal({ hold: true });
    quick = await startFakeFal();
  });
  afterAll(async () => {
    await held.close();
    await quick.close();
  });
  afterEach(async () => {
    held.release();
    await t?.close();
    t = undefined;
    clearFalJwksCache();
  });

  // One submission each: a refusal at the door is the engine's failure at once, not after retries.
  const fal = (f: FakeFal | string) =>
    typeof f === 'string'
      ? { type: 'fal', base_url: f, api_key_env: 'FAL_KEY', storage_url: quick.storageUrl, poll_interval_ms: 20, max_attempts: 1 }
      : { type: 'fal', base_url: f.url, api_key_env: 'FAL_KEY', storage_url: f.storageUrl, poll_interval_ms: 20, max_attempts: 1 };
  async function app(a: FakeFal | string, routing: Json, log = captureLog()) {
    return createTestApp({
      backend,
      realClock: true,
      allowPrivateUrls: true,
      models: [CUSTOM],
      routing,
      providers: { providers: { a: fal(a), b: fal(quick) }, env: { FAL_KEY: KEY } },
      worker: { pollMs: 50, log, allowPrivateUrls: true },
    });
  }
  const create = async (a: TestApp, token = a.token, prompt = 'a fox') => {
    const res = await generate(a, MODEL, { prompt }, {}, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ job_id: string }>().job_id;
  };
  const charges = async (a: TestApp, id: string) => (await a.store.billing.entriesOfJob(id)).filter((e) => e.kind === 'charge').length;
  const tried = async (a: TestApp, id: string) => ((await a.services.routes.of(id)) as Route | undefined)?.tried.map((s) => [s.engine, s.outcome]);
  const stateOf = async (a: TestApp, engine: string) =>
    (await a.app.inject({ method: 'GET', url: '/readyz' })).json<{ engines: { name: string; state: string }[] }>().engines.find((e) => e.name === engine)?.state;
  const warned = (log: ReturnType<typeof captureLog>, what: string) => log.lines.filter((l) => l.level === 'warn' && l.msg.startsWith(what)).length;
  /** The held fake's request still held whose input carries `prompt`, once submitted. */
  const heldRequest = (prompt: string) =>
    waitFor(async () => [...held.requests.values()].find((r) => r.held && (r.input as { prompt?: string }).prompt === prompt), `a submission of '${prompt}'`);

  it("a model bound to one engine whose circuit is open: its job waits, is the half-open probe once the cooldown passed, and completes", async () => {
    // Long enough that a submission made while the circuit was open would still find it open.
    t = await app(held, { circuit: { failures: 1, cooldown_ms: 1000 } });
    held.failNext(1, { status: 503, detail: 'overloaded' });
    const first = await create(t);
    expect((await jobEnd(t, first)).status).toBe('failed');
    expect(await stateOf(t, 'provider:a')).toBe('open');
    const before = held.submissions();
    const second = await create(t, t.token, 'a second fox');
    const request = await heldRequest('a second fox');
    // The one submission came once the cooldown had passed: the circuit is half-open, this job its probe.
    expect(await stateOf(t, 'provider:a')).toBe('half_open');
    held.release(request.id);
    const job = await jobEnd(t, second);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(held.submissions() - before).toBe(1);
    expect(await stateOf(t, 'provider:a')).toBe('closed');
    expect(await charges(t, first)).toBe(0);
    expect(await charges(t, second)).toBe(1);
  });

  it('a failed half-open probe opens the circuit again without logging it again; the next success closes it, logged once', async () => {
    const log = captureLog();
    t = await app(quick, { circuit: { failures: 1, cooldown_ms: 300 } }, log);
    // The first job opens the circuit; the second, its probe, fails at the door too.
    quick.failNext(2, { status: 503, detail: 'overloaded' });
    const before = quick.submissions();
    const first = await create(t);
    expect((await jobEnd(t, first)).status).toBe('failed');
    const second = await create(t);
    const probe = await jobEnd(t, second);
    expect(probe.status).toBe('failed');
    expect((probe.error as { code: string }).code).toBe('upstream_unavailable');
    expect(warned(log, 'engine circuit opened')).toBe(1);
    expect(warned(log, 'engine circuit closed')).toBe(0);
    const third = await create(t);
    expect((await jobEnd(t, third)).status).toBe('completed');
    expect(quick.submissions() - before).toBe(1);
    expect(warned(log, 'engine circuit opened')).toBe(1);
    expect(warned(log, 'engine circuit closed')).toBe(1);
  });

  it("a job that fell back to the next engine has spent one attempt, the one it ran in", async () => {
    t = await app(`http://127.0.0.1:${await freePort()}`, { model_engines: { [MODEL]: ['provider:a', 'provider:b'] } });
    const id = await create(t);
    const job = await jobEnd(t, id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(await tried(t, id)).toEqual([
      ['provider:a', 'refused'],
      ['provider:b', 'ran'],
    ]);
    expect((await t.store.queue.findJob(id))?.attempts).toBe(1);
  });

  it("a job finding its first engine at max_in_flight goes to the next after spill_after_ms ('busy'); each job is charged once", async () => {
    t = await app(held, {
      model_engines: { [MODEL]: { engines: ['provider:a', 'provider:b'], spill_after_ms: 300 } },
      engine_limits: { 'provider:a': { max_in_flight: 1 } },
    });
    const [a, b] = [held.submissions(), quick.submissions()];
    const first = await create(t, t.token, 'a held fox');
    const request = await heldRequest('a held fox');
    const second = await create(t);
    const job = await jobEnd(t, second);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(await tried(t, second)).toEqual([
      ['provider:a', 'busy'],
      ['provider:b', 'ran'],
    ]);
    held.release(request.id);
    expect((await jobEnd(t, first)).status).toBe('completed');
    expect(await tried(t, first)).toEqual([['provider:a', 'ran']]);
    expect([held.submissions() - a, quick.submissions() - b]).toEqual([1, 1]);
    expect(await charges(t, first)).toBe(1);
    expect(await charges(t, second)).toBe(1);
  });

  it("a member's own job shows no routing or upstream in its details; the same member made admin sees them", async () => {
    t = await app(`http://127.0.0.1:${await freePort()}`, { model_engines: { [MODEL]: ['provider:a', 'provider:b'] } });
    const token = await memberToken(t, 'bob@example.com', 'member');
    const id = await create(t, token);
    expect((await jobEnd(t, id)).status).toBe('completed');
    const member = await get(t, `/jobs/${id}/details`, token);
    expect(member.statusCode, member.body).toBe(200);
    expect(member.json()).not.toHaveProperty('routing');
    expect(member.json()).not.toHaveProperty('upstream');
    await t.services.identity.addMember('default', 'bob@example.com', 'admin', 'owner@localhost');
    const admin = (await get(t, `/jobs/${id}/details`, token)).json<{ routing: Route }>();
    expect(admin.routing).toMatchObject({ engine: 'provider:b', tried: [{ engine: 'provider:a', outcome: 'refused' }, { engine: 'provider:b', outcome: 'ran' }] });
  });
});
