import { describe, expect, it } from 'vitest';
import { Semaphore } from '../../src/lib/semaphore.js';

describe('Semaphore', () => {
  it('admits at most its permits, queues up to its queue, and refuses beyond', async () => {
    const gate = new Semaphore(2, 1);
    const a = (await gate.acquire())!;
    const b = (await gate.acquire())!;
    let cIn = false;
    const c = gate.acquire().then((r) => ((cIn = true), r));
    // Two hold, one waits: a fourth is refused at once.
    expect(await gate.acquire()).toBeUndefined();
    expect(cIn).toBe(false);
    a();
    const cRelease = (await c)!;
    expect(cIn).toBe(true);
    b();
    cRelease();
    // Everything released: two permits free again.
    expect(await gate.acquire()).toBeDefined();
    expect(await gate.acquire()).toBeDefined();
  });

  it('hands a released permit to the waiter before any newcomer', async () => {
    const gate = new Semaphore(1, 5);
    const first = (await gate.acquire())!;
    const waiter = gate.acquire();
    first();
    // A newcomer now queues behind the waiter instead of taking the permit.
    let newcomerIn = false;
    const newcomer = gate.acquire().then((r) => ((newcomerIn = true), r));
    const w = (await waiter)!;
    await Promise.resolve();
    expect(newcomerIn).toBe(false);
    w();
    expect(await newcomer).toBeDefined();
  });

  it('lets a waiter leave the queue when its signal aborts', async () => {
    const gate = new Semaphore(1, 1);
    const held = (await gate.acquire())!;
    const leaving = new AbortController();
    const waiting = gate.acquire(leaving.signal);
    leaving.abort(new Error('client left'));
    await expect(waiting).rejects.toThrow('client left');
    // Its place is free again: another may queue.
    const next = gate.acquire();
    held();
    expect(await next).toBeDefined();
  });
});
