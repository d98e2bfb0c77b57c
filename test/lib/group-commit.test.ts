import { describe, expect, it } from 'vitest';
import { GroupCommit, KeyedGroupCommit } from '../../src/lib/group-commit.js';
import type { Outcome } from '../../src/lib/group-commit.js';

/** A batcher whose run records each batch and answers each item with itself doubled, or refuses odd ones. */
function recorder(opts: { maxBatch?: number; windowMs?: number; refuseOdd?: boolean; throwWith?: number } = {}) {
  const batches: number[][] = [];
  let release: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  const gc = new GroupCommit<number, number>(
    async (items) => {
      batches.push([...items]);
      if (gate) await gate;
      if (opts.throwWith !== undefined && items.includes(opts.throwWith)) throw new Error(`batch with ${opts.throwWith} failed`);
      return items.map((i): Outcome<number> => (opts.refuseOdd && i % 2 === 1 ? { ok: false, error: new Error(`odd ${i}`) } : { ok: true, value: i * 2 }));
    },
    { maxBatch: opts.maxBatch ?? 64, windowMs: opts.windowMs ?? 0 },
  );
  return {
    gc,
    batches,
    hold() {
      gate = new Promise((r) => (release = r));
    },
    open() {
      gate = undefined;
      release?.();
    },
  };
}

describe('group commit', () => {
  it('runs a lone item as a batch of one and answers it', async () => {
    const r = recorder();
    expect(await r.gc.submit(4)).toBe(8);
    expect(r.batches).toEqual([[4]]);
  });

  it('puts items submitted in one turn in one batch, and items arriving while it runs in the next', async () => {
    const r = recorder();
    r.hold();
    const first = [1, 2, 3].map((i) => r.gc.submit(i));
    await new Promise((res) => setImmediate(res));
    await new Promise((res) => setImmediate(res));
    const later = [4, 5].map((i) => r.gc.submit(i));
    r.open();
    expect(await Promise.all([...first, ...later])).toEqual([2, 4, 6, 8, 10]);
    expect(r.batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('items that waited stallMs behind a batch still running start their own beside it', async () => {
    const r = recorder();
    r.hold();
    const stuck = r.gc.submit(1);
    await new Promise((res) => setImmediate(res));
    // The gate holds batch [1]; [2] must not wait for it.
    const next = r.gc.submit(2);
    const raced = await Promise.race([next.then(() => 'answered'), new Promise((res) => setTimeout(() => res('waiting'), 200))]);
    expect(raced).toBe('waiting');
    expect(r.batches).toEqual([[1], [2]]);
    r.open();
    expect(await Promise.all([stuck, next])).toEqual([2, 4]);
  });

  it('never puts more than maxBatch items in one batch', async () => {
    const r = recorder({ maxBatch: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((i) => r.gc.submit(i)));
    expect(r.batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('waits windowMs for company when idle', async () => {
    const r = recorder({ windowMs: 30 });
    const a = r.gc.submit(1);
    await new Promise((res) => setTimeout(res, 5));
    const b = r.gc.submit(2);
    await Promise.all([a, b]);
    expect(r.batches).toEqual([[1, 2]]);
  });

  it('refuses an item the run refuses, alone', async () => {
    const r = recorder({ refuseOdd: true });
    const results = await Promise.allSettled([1, 2, 3, 4].map((i) => r.gc.submit(i)));
    expect(results.map((x) => x.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(r.batches).toEqual([[1, 2, 3, 4]]);
  });

  it('runs each item of a batch that threw alone again, so only the item that breaks it fails', async () => {
    const r = recorder({ throwWith: 3 });
    const results = await Promise.allSettled([1, 2, 3, 4].map((i) => r.gc.submit(i)));
    expect(results.map((x) => (x.status === 'fulfilled' ? x.value : (x.reason as Error).message))).toEqual([2, 4, 'batch with 3 failed', 8]);
    expect(r.batches).toEqual([[1, 2, 3, 4], [1], [2], [3], [4]]);
  });

  it('keyed: items of one key share a batch, items of different keys never do', async () => {
    const batches: string[][] = [];
    const gc = new KeyedGroupCommit<string, string>(async (items) => {
      batches.push([...items]);
      return items.map((value) => ({ ok: true as const, value }));
    }, { maxBatch: 64, windowMs: 0 });
    await Promise.all([gc.submit('a', 'a1'), gc.submit('b', 'b1'), gc.submit('a', 'a2'), gc.submit('b', 'b2')]);
    expect(batches.sort()).toEqual([
      ['a1', 'a2'],
      ['b1', 'b2'],
    ]);
  });
});
