import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { IdentityService } from '../../src/services/identity/identity.js';
import { TOKEN_CACHE_TTL_MS } from '../../src/services/identity/token-cache.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';

const LIMITS = { maxConcurrentJobs: 4, maxBackloggedJobs: 100 };

describe('identity service', () => {
  let dir: string;
  let store: Store;
  let clock: ManualClock;
  let identity: IdentityService;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mediagen-identity-'));
    store = await openSqliteStore(join(dir, 'mediagen.db'));
    clock = new ManualClock('2026-11-22T12:00:00Z');
    identity = new IdentityService(store, clock, LIMITS);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lastUsed = async (tokenId: string) =>
    (await store.identity.listTokens((await identity.workspace('default')).id)).find((t) => t.id === tokenId)!.lastUsedAt;

  it('records a token\u2019s use at most once a minute', async () => {
    const boot = (await identity.bootstrap())!;
    const [token] = await store.identity.listTokens(boot.workspace.id);
    await identity.authenticate(`Bearer ${boot.secret}`);
    const first = clock.nowMs() * 1000;
    expect(await lastUsed(token!.id)).toBe(first);
    clock.advance(59_999);
    await identity.authenticate(`Bearer ${boot.secret}`);
    expect(await lastUsed(token!.id)).toBe(first);
    clock.advance(1);
    await identity.authenticate(`Bearer ${boot.secret}`);
    expect(await lastUsed(token!.id)).toBe(first + 60_000_000);
  });

  it('still authenticates when recording the use fails', async () => {
    const boot = (await identity.bootstrap())!;
    const failing = new IdentityService(
      {
        ...store,
        identity: new Proxy(store.identity, {
          get: (target, key) =>
            key === 'touchToken'
              ? () => Promise.reject(new Error('SQLITE_BUSY'))
              : (target[key as keyof typeof target] as (...a: unknown[]) => unknown).bind(target),
        }),
      },
      clock,
      LIMITS,
    );
    await expect(failing.authenticate(`Bearer ${boot.secret}`)).resolves.toMatchObject({ workspace: { name: 'default' } });
  });

  it('bootstraps once: workspace, owner and token together, then never again', async () => {
    const boot = (await identity.bootstrap())!;
    expect(boot.workspace.name).toBe('default');
    expect(await store.identity.getMember(boot.workspace.id, 'owner@localhost')).toMatchObject({ role: 'owner' });
    expect(await store.identity.listTokens(boot.workspace.id)).toHaveLength(1);
    expect(await identity.bootstrap()).toBeUndefined();
  });

  it('refuses a workspace name that looks like a workspace id', async () => {
    await expect(identity.createWorkspace('3f1d2c4b-0000-4000-8000-000000000000', 'a@b.c')).rejects.toThrow(/UUID/);
  });

  it('one message per kind of refusal: missing, malformed, unknown and revoked tokens', async () => {
    const boot = (await identity.bootstrap())!;
    await expect(identity.authenticate(undefined)).rejects.toThrow(/missing Authorization/);
    await expect(identity.authenticate('Token abc')).rejects.toThrow(/malformed/);
    await expect(identity.authenticate('Bearer mg_nope')).rejects.toThrow(/invalid API token/);
    await expect(identity.authenticate([`Bearer ${boot.secret}`, `Bearer ${boot.secret}`])).rejects.toThrow(/more than one/);
  });

  describe('token lookups are cached', () => {
    /** Counts the store's token lookups. */
    function counting(): { service: IdentityService; lookups: () => number } {
      let n = 0;
      const identityStore = new Proxy(store.identity, {
        get: (target, key) => {
          const fn = (target[key as keyof typeof target] as (...a: unknown[]) => unknown).bind(target);
          return key === 'findTokenByHash' ? (...a: unknown[]) => (n++, fn(...a)) : fn;
        },
      });
      return { service: new IdentityService({ ...store, identity: identityStore }, clock, LIMITS), lookups: () => n };
    }

    it('a token used again within the TTL is not looked up again; after it, it is', async () => {
      const boot = (await identity.bootstrap())!;
      const { service, lookups } = counting();
      for (let i = 0; i < 5; i++) await service.authenticate(`Bearer ${boot.secret}`);
      expect(lookups()).toBe(1);
      clock.advance(TOKEN_CACHE_TTL_MS);
      await service.authenticate(`Bearer ${boot.secret}`);
      expect(lookups()).toBe(2);
    });

    it('a revocation through this process takes effect on the very next request', async () => {
      const boot = (await identity.bootstrap())!;
      const { token, secret } = await identity.createToken('default', 'bot', 'owner@localhost');
      await identity.authenticate(`Bearer ${secret}`);
      await identity.revokeToken('default', token.id, 'owner@localhost');
      await expect(identity.authenticate(`Bearer ${secret}`)).rejects.toThrow(/revoked/);
      // Other tokens of the workspace are untouched.
      await expect(identity.authenticate(`Bearer ${boot.secret}`)).resolves.toMatchObject({ workspace: { name: 'default' } });
    });

    it('API access turned off through this process takes effect on the very next request, and back on too', async () => {
      const boot = (await identity.bootstrap())!;
      await identity.authenticate(`Bearer ${boot.secret}`);
      await identity.setWorkspace('default', { apiAccess: false });
      await expect(identity.authenticate(`Bearer ${boot.secret}`)).rejects.toThrow(/API access is disabled/);
      await identity.setWorkspace('default', { apiAccess: true });
      await expect(identity.authenticate(`Bearer ${boot.secret}`)).resolves.toMatchObject({ workspace: { apiAccess: true } });
    });

    it('a revocation by another process (straight in the store) takes effect within the TTL', async () => {
      const boot = (await identity.bootstrap())!;
      const [token] = await store.identity.listTokens(boot.workspace.id);
      await identity.authenticate(`Bearer ${boot.secret}`);
      await store.identity.revokeToken(boot.workspace.id, token!.id, clock.nowMs() * 1000);
      clock.advance(TOKEN_CACHE_TTL_MS);
      await expect(identity.authenticate(`Bearer ${boot.secret}`)).rejects.toThrow(/revoked/);
    });

    it('a lookup that began before a revocation is not kept', async () => {
      const boot = (await identity.bootstrap())!;
      const { token, secret } = await identity.createToken('default', 'bot', 'owner@localhost');
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const slow = new IdentityService(
        {
          ...store,
          identity: new Proxy(store.identity, {
            get: (target, key) => {
              const fn = (target[key as keyof typeof target] as (...a: unknown[]) => unknown).bind(target);
              // The row is read before the revocation, and handed back after it.
              return key === 'findTokenByHash' ? async (...a: unknown[]) => { const r = await fn(...a); await gate; return r; } : fn;
            },
          }),
        },
        clock,
        LIMITS,
      );
      const pending = slow.authenticate(`Bearer ${secret}`);
      await new Promise((r) => setTimeout(r, 20));
      await slow.revokeToken('default', token.id, 'owner@localhost');
      release();
      await pending;
      await expect(slow.authenticate(`Bearer ${secret}`)).rejects.toThrow(/revoked/);
      void boot;
    });
  });
});
