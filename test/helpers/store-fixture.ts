import { afterEach, beforeEach } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { Store } from '../../src/store/store.js';
import type { Backend } from './backends.js';

export const T0 = Date.UTC(2026, 10, 22) * 1000;

export interface StoreFixture {
  /** A fresh, empty database of the backend for each test. */
  readonly store: Store;
  /** Workspace `ws` (limits 2 and 3) and its API user. */
  readonly ws: { readonly id: string; readonly apiUserId: string };
  /** Another handle on the same database, closed after the test. */
  openAnother(): Promise<Store>;
}

/**
 * The setup every store contract suite shares: registers beforeEach/afterEach in the calling
 * describe block and returns the fixture, whose fields are valid inside tests.
 */
export function useStoreFixture(backend: Backend): StoreFixture {
  let db: Awaited<ReturnType<Backend['create']>>;
  let store: Store;
  let ws: StoreFixture['ws'];
  const extra: Store[] = [];
  beforeEach(async () => {
    db = await backend.create();
    store = await db.open();
    const apiUserId = newId();
    const w = await store.identity.createWorkspace({ id: newId(), name: 'ws', ownerEmail: 'o@ws.test', apiUserId, maxConcurrentJobs: 2, maxBackloggedJobs: 3, now: T0 });
    ws = { id: w!.id, apiUserId };
  });
  afterEach(async () => {
    for (const s of extra.splice(0)) await s.close();
    await store.close();
    await db.drop();
  });
  return {
    get store() {
      return store;
    },
    get ws() {
      return ws;
    },
    async openAnother() {
      const s = await db.open();
      extra.push(s);
      return s;
    },
  };
}
