import { beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;
const TYPE = 'image/vendor-b/model-b-1';

/** Issue 40, point 3: claims take the highest priority, then the workspace with the fewest running, then the oldest job. */
describe.each(backends)('fair share and priority of claims: $name', (backend) => {
  const f = useStoreFixture(backend);
  let store: Store;
  beforeEach(() => {
    store = f.store;
  });

  const workspace = async (name: string, priority?: number) => {
    const apiUserId = newId();
    const w = (await store.identity.createWorkspace({ id: newId(), name, ownerEmail: `o@${name}.test`, apiUserId, maxConcurrentJobs: 1000, maxBackloggedJobs: 0, now: T0 }))!;
    if (priority !== undefined) await store.identity.updateWorkspace(w.id, { priority });
    return { id: w.id, apiUserId };
  };
  /** `n` queued jobs of the workspace, created at `at` onwards (the store keeps each user's times increasing). */
  const flood = async (ws: { id: string; apiUserId: string }, n: number, at: number, type = TYPE) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 100) {
      const batch = Array.from({ length: Math.min(100, n - i) }, () => ({
        id: newId(), workspaceId: ws.id, apiUserId: ws.apiUserId, type, status: 'queued' as const, request: { prompt: 'p' }, webhookUrl: null, zeroDataRetention: false, createdBy: 'o@x.test',
      }));
      ids.push(...(await store.jobs.insertJobs(batch, at + i)).map((j) => j.id));
    }
    return ids;
  };
  /** The ids a batch claim took, sorted: a batch's jobs start together, so only which ones it took matters. */
  const claim = async (n = 1, types?: { only: string[] } | { except: string[] }) =>
    (await store.queue.claimMany({ leases: Array.from({ length: n }, () => ({ leaseId: newId(), outputKey: newId() })), leaseExpiresAt: T0 + 600 * SEC, now: T0 + 60 * SEC, ...(types ? { types } : {}) }))
      .map((j) => j.id)
      .sort();
  const sorted = (ids: (string | undefined)[]) => [...ids].sort();

  it("a flood of 500 jobs from one workspace delays another's job by no more than the slots already running", async () => {
    const a = await workspace('flooder');
    const b = await workspace('neighbour');
    const aJobs = await flood(a, 500, T0);
    // Three of the flood's jobs are running already.
    expect(await claim(3)).toEqual(sorted(aJobs.slice(0, 3)));
    const [bJob] = await flood(b, 1, T0 + 10 * SEC);
    // b runs nothing, a runs three: b's job, the newest of 501, is the very next claim.
    expect(await claim()).toEqual([bJob]);
    const [bNext] = await flood(b, 1, T0 + 11 * SEC);
    // b now runs one, a three: b's next job still goes first.
    expect(await claim()).toEqual([bNext]);
    // A batch takes what single claims would: b (two running) first, then a (three) and b in turn.
    const [b3, b4, b5] = await flood(b, 3, T0 + 12 * SEC);
    expect(await claim(3)).toEqual(sorted([b3, aJobs[3], b4]));
    // Both run four: a's job is older.
    expect(await claim()).toEqual([aJobs[4]]);
    expect(await claim()).toEqual([b5]);
    expect(await claim()).toEqual([aJobs[5]]);
  });

  it('with nothing running, the oldest job goes first and the workspaces then take turns', async () => {
    const a = await workspace('first');
    const b = await workspace('second');
    const aJobs = await flood(a, 500, T0);
    const bJobs = await flood(b, 3, T0 + 10 * SEC);
    expect(await claim()).toEqual([aJobs[0]]);
    expect(await claim()).toEqual([bJobs[0]]);
    expect(await claim(3)).toEqual(sorted([aJobs[1], bJobs[1], aJobs[2]]));
    expect(await claim()).toEqual([bJobs[2]]);
  });

  it('a higher priority workspace goes first, even with more jobs running and newer jobs', async () => {
    const low = await workspace('low', 2);
    const normal = await workspace('normal');
    const high = await workspace('high', 9);
    const lowJobs = await flood(low, 3, T0);
    const normalJobs = await flood(normal, 3, T0 + SEC);
    const highJobs = await flood(high, 3, T0 + 2 * SEC);
    expect(await claim(2)).toEqual(sorted(highJobs.slice(0, 2)));
    expect(await claim()).toEqual([highJobs[2]]);
    expect(await claim(4)).toEqual(sorted([...normalJobs, lowJobs[0]]));
    expect(await claim()).toEqual([lowJobs[1]]);
  });

  it('keeps to the type filter: a workspace whose waiting jobs the claimer cannot run does not block the others', async () => {
    const a = await workspace('remote-bound');
    const b = await workspace('local');
    await flood(a, 50, T0, 'video/vendor-x/remote');
    const bJobs = await flood(b, 2, T0 + SEC);
    expect(await claim(5, { except: ['video/vendor-x/remote'] })).toEqual(sorted(bJobs));
    expect(await claim(1, { only: ['image/none'] })).toEqual([]);
  });
});
