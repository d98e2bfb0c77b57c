import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { claimNow, png, remoteApp, remoteJob, workerToken, wpost, wput } from '../helpers/remote-worker.js';

/**
 * One worker's own calls about a job overlapping (its heartbeat thread beside its main loop): the
 * lease holder is never told it lost the job because another of its calls moved the job first.
 */
describe.each(backends)('overlapping calls of the lease holder on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  it('concurrent identical progress calls all answer 200 with the status reached', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    for (let i = 0; i < 8; i++) {
      await remoteJob(t);
      const [job] = await claimNow(t, token);
      const answers = await Promise.all(
        [0, 1, 2].map(() => wpost(t, token, `/jobs/${job!.id}/progress`, { lease_id: job!.lease_id, status: 'sampling', fraction: 0.5 })),
      );
      expect(answers.map((a) => [a.statusCode, a.json<{ status?: string }>().status])).toEqual([
        [200, 'sampling'],
        [200, 'sampling'],
        [200, 'sampling'],
      ]);
      await wpost(t, token, `/jobs/${job!.id}/fail`, { lease_id: job!.lease_id, code: 'engine_failed', message: 'done with it' });
    }
  });

  it('complete racing a progress heartbeat that moves the status completes the job', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t);
    const bytes = await png();
    for (let i = 0; i < 8; i++) {
      const id = await remoteJob(t);
      const [job] = await claimNow(t, token);
      expect((await wput(t, token, id, 'o.png', job!.lease_id, bytes)).statusCode).toBe(201);
      const [beat, done] = await Promise.all([
        wpost(t, token, `/jobs/${id}/progress`, { lease_id: job!.lease_id, status: 'sampling', fraction: 0.9 }),
        wpost(t, token, `/jobs/${id}/complete`, { lease_id: job!.lease_id, outputs: [{ name: 'o.png' }] }),
      ]);
      expect([done.statusCode, done.body]).toEqual([200, '{"status":"completed"}']);
      // The heartbeat either came first (200) or found the job ended (409: it has nothing left to do).
      expect([200, 409]).toContain(beat.statusCode);
      expect((await get(t, `/jobs/${id}`)).json()).toMatchObject({ status: 'completed' });
    }
  });
});
