import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuardedDispatcher } from '../../src/lib/safe-fetch.js';
import { WebhookSender } from '../../src/worker/webhook-sender.js';
import { PUBLIC_URL, createTestApp, generate, jobWhenEnded } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { ScriptedEngine, deferred, waitFor } from '../helpers/scripted-engine.js';
import { B1, MINIMAL } from './generate-support.js';
import { REMOTE_MODEL, claimNow, png, remoteApp, workerToken, wput } from '../helpers/remote-worker.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** X-Request-Id: taken when well-formed, else made; on every response, every log line of the request, and the jobs it creates. */
describe('X-Request-Id', () => {
  let t: TestApp;
  const lines: Json[] = [];
  afterEach(async () => {
    lines.length = 0;
    await t.close();
  });
  // The logger the server, its worker and its webhook sender share, its lines captured.
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Json) });
  const start = async (engine = new ScriptedEngine()) => {
    t = await createTestApp({ logger: log, worker: { engine, log }, allowPrivateUrls: true });
  };
  const auth = () => ({ authorization: `Bearer ${t.token}` });

  it('echoes a well-formed id on every answer: success, 400, 401, 404, an unknown route and a malformed path', async () => {
    await start();
    const id = 'client-Req_1.2:3';
    const answers = [
      await t.app.inject({ url: '/jobs', headers: { ...auth(), 'x-request-id': id } }),
      await t.app.inject({ url: '/jobs?limit=0', headers: { ...auth(), 'x-request-id': id } }),
      await t.app.inject({ url: '/jobs', headers: { 'x-request-id': id } }),
      await t.app.inject({ url: '/jobs/nope', headers: { ...auth(), 'x-request-id': id } }),
      await t.app.inject({ url: '/no/such/route', headers: { ...auth(), 'x-request-id': id } }),
      await t.app.inject({ url: '/jobs/%E0%A4%A', headers: { ...auth(), 'x-request-id': id } }),
      await t.app.inject({ method: 'POST', url: `/generate/${B1}`, headers: { ...auth(), 'x-request-id': id, 'content-type': 'application/json' }, payload: '{' }),
    ];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 400, 401, 404, 404, 404, 400]);
    for (const a of answers) expect(a.headers['x-request-id']).toBe(id);
  });

  it('makes a new one when none is sent or the one sent is not well-formed', async () => {
    await start();
    const sent = [undefined, '', 'a'.repeat(129), 'has space', 'semi;colon', 'ünïcode', 'a/b'];
    const ids = new Set<string>();
    for (const value of sent) {
      const res = await t.app.inject({ url: '/jobs', headers: { ...auth(), ...(value === undefined ? {} : { 'x-request-id': value }) } });
      const id = res.headers['x-request-id'] as string;
      expect(id, String(value)).toMatch(UUID);
      ids.add(id);
    }
    expect(ids.size).toBe(sent.length);
    expect((await t.app.inject({ url: '/jobs', headers: { ...auth(), 'x-request-id': 'a'.repeat(128) } })).headers['x-request-id']).toBe('a'.repeat(128));
    // Sent twice: Node joins the values with ", ", which is not well-formed.
    const twice = await t.app.inject({ url: '/jobs', headers: { ...auth(), 'x-request-id': ['one', 'two'] } });
    expect(twice.headers['x-request-id']).toMatch(UUID);
  });

  it('names the request in its log lines, and the job it created in the worker lines about it', async () => {
    await start();
    const res = await generate(t, B1, MINIMAL[B1], { 'x-request-id': 'trace-77' });
    const jobId = (res.json() as Json).job_id as string;
    await jobWhenEnded(t, jobId);
    expect((await t.store.queue.findJob(jobId))!.requestId).toBe('trace-77');
    const ofRequest = lines.filter((l) => l.requestId === 'trace-77');
    expect(ofRequest.map((l) => l.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed', 'job completed']));
    const completed = lines.find((l) => l.msg === 'job completed')!;
    expect(completed).toMatchObject({ jobId, requestId: 'trace-77' });
    // Every line about another request carries that request's id, never this one.
    for (const l of lines.filter((x) => x.msg === 'incoming request')) expect(l.requestId).toEqual(expect.any(String));
    // A job created without a well-formed id keeps the one the server made.
    const other = await generate(t, B1, MINIMAL[B1], { 'x-request-id': 'bad id' });
    expect((await t.store.queue.findJob((other.json() as Json).job_id as string))!.requestId).toBe(other.headers['x-request-id']);
  });

  it('names the request that created the job in the webhook sender lines and in a cancel or delete that cannot remove its files', async () => {
    const engine = new ScriptedEngine();
    engine.hold = deferred();
    await start(engine);
    const receiver = await new Receiver().start();
    const dispatcher = createGuardedDispatcher({ allowPrivate: true });
    const sender = new WebhookSender(
      { webhooks: t.services.webhooks, signals: t.services.signals, clock: t.clock, dispatcher, publicUrl: () => PUBLIC_URL, log },
      { concurrency: 1, pollMs: 1000, timeoutMs: 5000 },
    );
    try {
      t.outputs.remove = async () => {
        throw Object.assign(new Error('I/O'), { code: 'EIO' });
      };
      const ids: string[] = [];
      for (const [n, method, path] of [
        ['trace-cancel', 'POST', 'cancel'],
        ['trace-delete', 'DELETE', ''],
      ] as const) {
        const jobId = ((await generate(t, B1, MINIMAL[B1], { 'x-request-id': n, 'x-webhook-url': `${receiver.url}/hook` })).json() as Json).job_id as string;
        await waitFor(async () => engine.sampling.includes(jobId), 'the job to sample');
        const res = await t.app.inject({ method, url: `/jobs/${jobId}${path ? `/${path}` : ''}`, headers: { ...auth(), 'x-request-id': `${n}-2` } });
        expect(res.statusCode).toBe(200);
        const removal = lines.find((l) => l.jobId === jobId && String(l.msg).startsWith('removing'));
        expect(removal).toMatchObject({ requestId: `${n}-2`, jobRequestId: n });
        ids.push(jobId);
      }
      // The cancelled job's webhook (a deleted job's is dropped with it).
      expect(await sender.sendDue()).toBe(1);
      expect(lines.find((l) => l.msg === 'webhook delivered')).toMatchObject({ jobId: ids[0], requestId: 'trace-cancel' });
    } finally {
      engine.hold.resolve();
      await dispatcher.close();
      await receiver.close();
    }
  });

  it('names the request that created a remote job, and the worker call, in the remote lines about it; maintenance names each job it fails', async () => {
    t = await remoteApp({ logger: log });
    const token = await workerToken(t);
    const create = (id: string) => generate(t, REMOTE_MODEL, { prompt: 'a lighthouse', aspect_ratio: '1:1', resolution: '1K' }, { 'x-request-id': id });
    const done = ((await create('abc')).json() as Json).job_id as string;
    const [job] = await claimNow(t, token);
    expect(lines.find((l) => l.msg === 'remote job claimed')).toMatchObject({ jobId: done, jobRequestId: 'abc', requestId: expect.any(String) });
    expect((await wput(t, token, done, 'output.png', job!.lease_id, await png())).statusCode).toBe(201);
    const complete = await t.app.inject({
      method: 'POST',
      url: `/worker/v1/jobs/${done}/complete`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': 'worker-call-1' },
      payload: JSON.stringify({ lease_id: job!.lease_id, outputs: [{ name: 'output.png' }] }),
    });
    expect(complete.statusCode).toBe(200);
    expect(lines.find((l) => l.msg === 'remote job completed')).toMatchObject({ jobId: done, jobRequestId: 'abc', requestId: 'worker-call-1' });
    // Nobody takes this one within its model's timeout (180 s): maintenance fails it, in a line naming it.
    const untaken = ((await create('def')).json() as Json).job_id as string;
    t.clock.advance(181_000);
    const expired = await waitFor(async () => lines.find((l) => l.jobId === untaken && l.code === 'timeout'), 'the expire line');
    expect(expired).toMatchObject({ jobRequestId: 'def', msg: 'remote job failed: it waited past its timeout' });
  });
});
