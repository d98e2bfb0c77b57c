import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACTIVE_STATUSES } from '../../src/domain/states.js';
import type { JobStatus } from '../../src/domain/states.js';
import { newId } from '../../src/lib/ids.js';
import type { AdmissionCounts, JobMoveName, Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const SEC = 1_000_000;

type Op =
  | { kind: 'insert'; ws: 0 | 1; status: 'queued' | 'backlogged' }
  | { kind: 'claim' }
  | { kind: 'move'; name: JobMoveName; pick: number }
  | { kind: 'delete'; pick: number }
  | { kind: 'prune' }
  | { kind: 'reap' };

const MOVE_NAMES: readonly JobMoveName[] = ['start', 'markSampling', 'markIntermediate', 'complete', 'fail', 'requeue', 'promote', 'cancel', 'expire'];

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), ws: fc.constantFrom(0 as const, 1 as const), status: fc.constantFrom('queued' as const, 'backlogged' as const) }),
  fc.constant({ kind: 'claim' as const }),
  fc.record({ kind: fc.constant('move' as const), name: fc.constantFrom(...MOVE_NAMES), pick: fc.nat() }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
  fc.constant({ kind: 'prune' as const }),
  fc.constant({ kind: 'reap' as const }),
);

describe.each(backends)('admission counts: $name', (backend) => {
  const f = useStoreFixture(backend);

  it('the running numbers equal a recount of the rows after every kind of move, deletion and lease recovery', async () => {
    const store: Store = f.store;
    const other = newId();
    const otherUser = newId();
    await store.identity.createWorkspace({ id: other, name: 'other', ownerEmail: 'o@other.test', apiUserId: otherUser, maxConcurrentJobs: 2, maxBackloggedJobs: 3, now: T0 });
    const spaces = [
      { id: f.ws.id, apiUserId: f.ws.apiUserId },
      { id: other, apiUserId: otherUser },
    ];
    const jobs: { id: string; ws: number }[] = [];
    const leases = new Map<string, string>();
    let now = T0;

    const recount = async (ws: number): Promise<AdmissionCounts> => {
      let active = 0;
      let backlogged = 0;
      for (const j of jobs.filter((x) => x.ws === ws)) {
        const status = (await store.queue.findJob(j.id))?.status;
        if (status === 'backlogged') backlogged++;
        else if (status && ACTIVE_STATUSES.includes(status)) active++;
      }
      return { active, backlogged };
    };

    const apply = async (o: Op) => {
      now += SEC;
      const picked = (pick: number) => jobs[pick % Math.max(1, jobs.length)];
      switch (o.kind) {
        case 'insert': {
          const s = spaces[o.ws]!;
          const job = await store.jobs.insertJob(
            { id: newId(), workspaceId: s.id, apiUserId: s.apiUserId, type: 'image/vendor-b/model-b-1', status: o.status as JobStatus, request: {}, webhookUrl: null, zeroDataRetention: false, createdBy: "o@ws.test" },
            now,
          );
          jobs.push({ id: job.id, ws: o.ws });
          return;
        }
        case 'claim': {
          const c = await store.queue.claim({ leaseId: newId(), leaseExpiresAt: now + 5 * SEC, outputKey: newId(), now });
          if (c) leases.set(c.id, c.leaseId!);
          return;
        }
        case 'move': {
          const j = picked(o.pick);
          if (!j) return;
          const leaseId = leases.get(j.id) ?? newId();
          // Holder moves need the lease; the others ignore it.
          await store.queue.move(o.name, { id: j.id, leaseId, now } as never);
          return;
        }
        case 'delete': {
          const j = picked(o.pick);
          if (j) await store.jobs.deleteJob(spaces[j.ws]!.apiUserId, j.id);
          return;
        }
        case 'prune':
          await store.retention.deleteJobs(now, 3);
          return;
        case 'reap':
          // What a crashed worker leaves: leases that ran out, handed back to the queue.
          for (const job of await store.queue.expiredLeases(now, 10)) await store.queue.move('requeue', { id: job.id, leaseId: job.leaseId!, now });
          return;
      }
    };

    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 40 }), async (ops) => {
        for (const o of ops) {
          await apply(o);
          for (const ws of [0, 1]) expect(await store.queue.admissionCounts(spaces[ws]!.id)).toEqual(await recount(ws));
        }
      }),
      { numRuns: 12 },
    );
  });
});
