import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { REMOTE_MODEL, claimNow, remoteApp, workerToken } from '../helpers/remote-worker.js';

const LOCAL_MODEL = 'image/vendor-a/model-a-2/medium-turbo';

/** Issue 40, point 3, through the services: remote workers' claims and the in-process worker's claims follow priority and fair share. */
describe.each(backends)('claim priority and fair share on $name', (backend) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  const create = async (model: string, token: string = t.token): Promise<string> => {
    const res = await generate(t, model, { prompt: 'a lighthouse at dusk', aspect_ratio: '1:1', resolution: '1K' }, {}, token);
    expect(res.statusCode).toBe(200);
    return (res.json() as { job_id: string }).job_id;
  };

  it("a remote worker's claims take the higher priority workspace first, then the workspace with fewer jobs running", async () => {
    t = await remoteApp({ backend, limits: { maxConcurrentJobs: 50, maxBackloggedJobs: 0 } });
    const worker = await workerToken(t);
    const older = [await create(REMOTE_MODEL), await create(REMOTE_MODEL), await create(REMOTE_MODEL)];
    const urgent = await t.newWorkspace('urgent');
    await t.services.identity.setWorkspace(urgent.workspaceId, { priority: 8 });
    const urgentJob = await create(REMOTE_MODEL, urgent.token);
    const ids = async (max: number) => (await claimNow(t, worker, { max })).map((j) => j.id);
    expect(await ids(1)).toEqual([urgentJob]);
    expect(await ids(1)).toEqual([older[0]]);
    // The default workspace runs one; a newcomer at the same priority runs none: its job goes next.
    const other = await t.newWorkspace('other');
    const otherJob = await create(REMOTE_MODEL, other.token);
    expect(await ids(1)).toEqual([otherJob]);
    expect(await ids(5)).toEqual([older[1], older[2]]);
  });

  it("the in-process worker's claims follow the same order", async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 50, maxBackloggedJobs: 0 } });
    const older = [await create(LOCAL_MODEL), await create(LOCAL_MODEL)];
    const low = await t.newWorkspace('low');
    const high = await t.newWorkspace('high');
    await t.services.identity.setWorkspace(low.workspaceId, { priority: 0 });
    await t.services.identity.setWorkspace(high.workspaceId, { priority: 9 });
    const lowJob = await create(LOCAL_MODEL, low.token);
    const highJob = await create(LOCAL_MODEL, high.token);
    const ids = async (max: number) => (await t.services.runs.claimMany(max)).map((j) => j.id);
    expect(await ids(1)).toEqual([highJob]);
    expect(await ids(1)).toEqual([older[0]]);
    expect(await ids(1)).toEqual([older[1]]);
    expect(await ids(4)).toEqual([lowJob]);
  });

  it('a priority outside 0 to 9 is refused, and a workspace shows its priority', async () => {
    t = await createTestApp({ backend });
    const ws = await t.newWorkspace('x');
    await expect(t.services.identity.setWorkspace(ws.workspaceId, { priority: 10 })).rejects.toThrow('priority must be a whole number from 0 to 9');
    await expect(t.services.identity.setWorkspace(ws.workspaceId, { priority: -1 })).rejects.toThrow('priority must be a whole number from 0 to 9');
    expect((await t.services.identity.setWorkspace(ws.workspaceId, {})).priority).toBe(5);
    expect((await t.services.identity.setWorkspace(ws.workspaceId, { priority: 0 })).priority).toBe(0);
  });
});
