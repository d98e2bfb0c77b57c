import type { TokenOwner } from '../../store/store.js';

/**
 * How long a token lookup is reused. Changes made in this process (a revocation, API access
 * turned off, new limits) clear the entries they touch at once; changes made by another process
 * (`mediagen admin` on the same store, another server on PostgreSQL) reach this one within this
 * bound. Short enough that an operator never sees it, long enough that a busy token is looked up a
 * few times a second instead of on every request (docs/benchmarks.md).
 */
export const TOKEN_CACHE_TTL_MS = 200;

/** Distinct tokens remembered; the least recently used goes first. */
export const TOKEN_CACHE_SIZE = 1000;

interface Entry {
  owner: TokenOwner;
  readonly until: number;
}

/** Token lookups by token hash: a small LRU with a short time to live. Unknown tokens are never kept. */
export class TokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #size: number;
  #generation = 0;

  constructor(opts: { ttlMs?: number; size?: number } = {}) {
    this.#ttlMs = opts.ttlMs ?? TOKEN_CACHE_TTL_MS;
    this.#size = opts.size ?? TOKEN_CACHE_SIZE;
  }

  get(tokenHash: string, nowMs: number): TokenOwner | undefined {
    const e = this.#entries.get(tokenHash);
    if (!e) return undefined;
    this.#entries.delete(tokenHash);
    // Expired, or the clock went back: read again.
    if (nowMs >= e.until || nowMs < e.until - this.#ttlMs) return undefined;
    this.#entries.set(tokenHash, e);
    return e.owner;
  }

  /** Changes with every `forget`: a lookup begun before one must not be kept (it may be stale). */
  get generation(): number {
    return this.#generation;
  }

  /** `generation`: this cache's generation when the lookup began. */
  set(tokenHash: string, owner: TokenOwner, nowMs: number, generation: number): void {
    if (this.#ttlMs <= 0 || generation !== this.#generation) return;
    this.#entries.delete(tokenHash);
    this.#entries.set(tokenHash, { owner, until: nowMs + this.#ttlMs });
    if (this.#entries.size > this.#size) this.#entries.delete(this.#entries.keys().next().value!);
  }

  /** Replaces the owner of a cached token (its use was just recorded) without extending its life. */
  update(tokenHash: string, owner: TokenOwner): void {
    const e = this.#entries.get(tokenHash);
    if (e) e.owner = owner;
  }

  /** Forgets the entries of one token (revoked) or of every token of one workspace (changed). */
  forget(match: { tokenId?: string; workspaceId?: string }): void {
    this.#generation++;
    for (const [hash, e] of this.#entries) {
      if (e.owner.token.id === match.tokenId || e.owner.workspace.id === match.workspaceId) this.#entries.delete(hash);
    }
  }
}
