import { beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { Store } from '../../src/store/store.js';
import { backends } from '../helpers/backends.js';
import { expectLedgerConsistent } from '../helpers/ledger.js';
import { T0, useStoreFixture } from '../helpers/store-fixture.js';

const USD = 1_000_000;

describe.each(backends)('ledger store contract: $name', (backend) => {
  const f = useStoreFixture(backend);
  let store: Store;
  let ws: string;
  beforeEach(() => {
    store = f.store;
    ws = f.ws.id;
  });

  const hold = (amount: number, jobId = newId(), now = T0) =>
    store.billing.hold({ workspaceId: ws, jobId, jobType: 'image/vendor-b/model-b-1', amountMicros: amount, now });

  it('starts at zero and holds nothing it cannot cover', async () => {
    expect(await store.billing.getBalance(ws)).toEqual({ balanceMicros: 0, heldMicros: 0 });
    expect(await hold(1)).toBeUndefined();
    expect(await store.billing.listEntries(ws)).toEqual([]);
  });

  it('keeps the running totals equal to the sum of the entries after every step', async () => {
    await store.billing.topUp({ workspaceId: ws, amountMicros: 1 * USD, createdBy: 'o@ws.test', now: T0 });
    await expectLedgerConsistent(store, ws);
    const [a, b, c] = [newId(), newId(), newId()];
    expect(await hold(400_000, a)).toEqual({ balanceMicros: USD, heldMicros: 400_000 });
    await expectLedgerConsistent(store, ws);
    expect(await hold(400_000, b)).toEqual({ balanceMicros: USD, heldMicros: 800_000 });
    await expectLedgerConsistent(store, ws);
    // Only $0.20 is available now.
    expect(await hold(200_001, c)).toBeUndefined();
    await expectLedgerConsistent(store, ws);
    expect(await store.billing.charge(a, T0 + 5)).toMatchObject({ kind: 'charge', amountMicros: 400_000, jobId: a, at: T0 + 5 });
    expect(await expectLedgerConsistent(store, ws)).toEqual({ balance: 600_000, held: 400_000 });
    expect(await store.billing.release(b, T0 + 6)).toMatchObject({ kind: 'release', amountMicros: 400_000, jobId: b });
    expect(await expectLedgerConsistent(store, ws)).toEqual({ balance: 600_000, held: 0 });
    expect(await hold(600_000, c)).toEqual({ balanceMicros: 600_000, heldMicros: 600_000 });
    await expectLedgerConsistent(store, ws);
  });

  it('charges or releases a hold at most once: a second charge, a release after a charge, or a charge after a release write nothing', async () => {
    await store.billing.topUp({ workspaceId: ws, amountMicros: USD, createdBy: 'o', now: T0 });
    const [a, b] = [newId(), newId()];
    await hold(100_000, a);
    await hold(100_000, b);
    expect(await store.billing.charge(a, T0)).toBeDefined();
    expect(await store.billing.charge(a, T0)).toBeUndefined();
    expect(await store.billing.release(a, T0)).toBeUndefined();
    expect(await store.billing.release(b, T0)).toBeDefined();
    expect(await store.billing.charge(b, T0)).toBeUndefined();
    expect(await store.billing.charge(newId(), T0)).toBeUndefined();
    expect(await expectLedgerConsistent(store, ws)).toEqual({ balance: 900_000, held: 0 });
    expect((await store.billing.listEntries(ws)).map((e) => e.kind).sort()).toEqual(['charge', 'hold', 'hold', 'release', 'top_up']);
  });

  it('charges a metered job its real amount, at most its hold, and releases the rest with it: once', async () => {
    await store.billing.topUp({ workspaceId: ws, amountMicros: USD, createdBy: 'o', now: T0 });
    const [a, b, c] = [newId(), newId(), newId()];
    for (const id of [a, b, c]) await hold(300_000, id);
    expect(await store.billing.charge(a, T0 + 1, 125_000)).toMatchObject({ kind: 'charge', amountMicros: 125_000, jobId: a, at: T0 + 1 });
    expect(await expectLedgerConsistent(store, ws)).toEqual({ balance: 875_000, held: 600_000 });
    const ofA = (await store.billing.listEntries(ws)).filter((e) => e.jobId === a);
    expect(ofA.map((e) => [e.kind, e.amountMicros]).sort()).toEqual([['charge', 125_000], ['hold', 300_000], ['release', 175_000]]);
    expect(ofA.every((e) => e.jobType === 'image/vendor-b/model-b-1')).toBe(true);
    // Settled: neither a second charge nor a release writes anything.
    expect(await store.billing.charge(a, T0 + 2, 1)).toBeUndefined();
    expect(await store.billing.release(a, T0 + 2)).toBeUndefined();
    // More than the hold is charged as the hold, with no release; nothing at all is a charge of 0.
    expect(await store.billing.charge(b, T0 + 3, 900_000)).toMatchObject({ kind: 'charge', amountMicros: 300_000 });
    expect(await store.billing.charge(c, T0 + 4, 0)).toMatchObject({ kind: 'charge', amountMicros: 0 });
    expect(await expectLedgerConsistent(store, ws)).toEqual({ balance: 575_000, held: 0 });
    const charges = await store.billing.listCharges({ workspaceId: ws, from: T0, before: T0 + 100, limit: 10 });
    expect(charges.map((e) => e.amountMicros)).toEqual([0, 300_000, 125_000]);
  });

  it('refuses a second hold for one job (unique job and kind)', async () => {
    await store.billing.topUp({ workspaceId: ws, amountMicros: USD, createdBy: 'o', now: T0 });
    const a = newId();
    await hold(100_000, a);
    await expect(store.transaction((tx) => tx.billing.hold({ workspaceId: ws, jobId: a, jobType: 't', amountMicros: 1, now: T0 }))).rejects.toThrow();
    expect(await expectLedgerConsistent(store, ws)).toEqual({ balance: USD, held: 100_000 });
  });

  it('gives charges strictly increasing times per workspace, even within one microsecond', async () => {
    await store.billing.topUp({ workspaceId: ws, amountMicros: USD, createdBy: 'o', now: T0 });
    const ids = [newId(), newId(), newId()];
    for (const id of ids) await hold(1_000, id);
    const times = [];
    for (const id of ids) times.push((await store.billing.charge(id, T0 + 100))!.at);
    expect(times).toEqual([T0 + 100, T0 + 101, T0 + 102]);
  });

  it('lists charges in a window, newest first, before a cursor', async () => {
    await store.billing.topUp({ workspaceId: ws, amountMicros: USD, createdBy: 'o', now: T0 });
    const ids = Array.from({ length: 5 }, () => newId());
    for (const [i, id] of ids.entries()) {
      await hold(1_000 * (i + 1), id);
      await store.billing.charge(id, T0 + i * 10);
    }
    const list = (from: number, before: number, limit = 10) => store.billing.listCharges({ workspaceId: ws, from, before, limit });
    expect((await list(T0, T0 + 1000)).map((e) => e.jobId)).toEqual([...ids].reverse());
    expect((await list(T0 + 10, T0 + 40)).map((e) => e.jobId)).toEqual([ids[3], ids[2], ids[1]]);
    expect((await list(T0, T0 + 1000, 2)).map((e) => e.amountMicros)).toEqual([5_000, 4_000]);
  });

  it('makes a negative balance unwritable even for a bypassing statement (CHECK constraints)', async () => {
    await store.billing.topUp({ workspaceId: ws, amountMicros: 1_000, createdBy: 'o', now: T0 });
    await hold(1_000);
    // A top-up cannot be negative, and no hold can exceed what is available.
    await expect(store.billing.topUp({ workspaceId: ws, amountMicros: -1, createdBy: 'o', now: T0 })).rejects.toThrow();
    expect(await hold(1)).toBeUndefined();
    await expectLedgerConsistent(store, ws);
  });
});
