import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { REMOTE_MODEL, claimNow, png, remoteApp, workerToken, wpost, wput } from '../helpers/remote-worker.js';
import { waitFor } from '../helpers/scripted-engine.js';
import { openEvents } from '../helpers/sse.js';

/**
 * A client waiting on a remote job hears its remote moves at once: `Prefer: wait` returns on the
 * worker's complete, and the event stream ends when maintenance fails a job nobody took. The test
 * clock never runs out a wait: only the wake-ups can answer.
 */
describe.each(backends)('waiting on a remote job on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  it("Prefer: wait returns on the remote worker's complete", async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const answer = generate(t, REMOTE_MODEL, { prompt: 'a lighthouse at dusk', aspect_ratio: '1:1', resolution: '1K' }, { prefer: 'wait=60' });
    const [job] = await waitFor(async () => {
      const jobs = await claimNow(t, token);
      return jobs.length > 0 ? jobs : undefined;
    }, 'the job to be claimed');
    expect((await wput(t, token, job!.id, 'output.png', job!.lease_id, await png())).statusCode).toBe(201);
    expect((await wpost(t, token, `/jobs/${job!.id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'output.png' }] })).statusCode).toBe(200);
    const res = await answer;
    expect(res.statusCode).toBe(200);
    expect(res.json() as Json).toMatchObject({ job_id: job!.id, status: 'completed' });
  });

  it('the event stream ends when maintenance fails a remote job nobody took, with one webhook', async () => {
    t = await remoteApp({ backend });
    const created = await generate(t, REMOTE_MODEL, { prompt: 'a lighthouse', aspect_ratio: '1:1', resolution: '1K' }, { 'x-webhook-url': 'https://hooks.example/h' });
    const id = (created.json() as { job_id: string }).job_id;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const stream = await openEvents(base, `/jobs/${id}/events`, t.token);
    try {
      expect((await stream.eventsUntil((e) => e.event === 'status'))[0]!.data).toMatchObject({ status: 'queued' });
      t.clock.advance(181_000);
      const events = await stream.eventsUntil((e) => e.event === 'end');
      expect(events.at(-1)!.data).toMatchObject({ job_id: id, status: 'failed', error: { code: 'timeout' } });
    } finally {
      stream.close();
    }
    expect(((await get(t, `/jobs/${id}/webhook-deliveries`)).json() as { items: Json[] }).items).toHaveLength(1);
  });
});
