import { afterEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import type { TestApp } from '../helpers/app.js';
import { REMOTE_MODEL, claimNow, remoteApp, remoteJob, workerToken } from '../helpers/remote-worker.js';

/** Claims under stress: hostile patterns, shutdown, revocation during the wait, empty filters. */
describe.each(backends)('worker claims on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  it('a claim with a pathological pattern is answered by its result (no backtracking blow-up)', async () => {
    t = await remoteApp({ backend });
    const token = await workerToken(t, ['*'.repeat(150)]);
    const id = await remoteJob(t);
    // Names no remote-bound model: nothing to take.
    expect(await claimNow(t, token, { models: [`${'*'.repeat(60)}x`] })).toEqual([]);
    expect(await claimNow(t, token, { models: [`${'*?'.repeat(10)}*medium`] })).toMatchObject([{ id, model: REMOTE_MODEL }]);
  });
});
