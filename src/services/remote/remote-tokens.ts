import type { Clock } from '../../lib/clock.js';
import { TOKEN_PREFIX, WORKER_TOKEN_PREFIX, hashToken, newId, newToken } from '../../lib/ids.js';
import type { Log } from '../../lib/log.js';
import { msToMicros } from '../../lib/time.js';
import { DomainError, invalid, notFound } from '../../domain/error-catalogue.js';
import type { Store } from '../../store/store.js';
import type { LiveWorker, WorkerToken, WorkerTokenMatch } from '../../store/remote-token-store.js';
import { checkPatterns, scopeCovers } from './remote-patterns.js';

export { checkPatterns, matchesModel, scopeCovers } from './remote-patterns.js';
export type { WorkerScope } from './remote-patterns.js';

/** Who a worker request is: the token's id and name, what it may work on, and the key of its input URLs. */
export interface WorkerPrincipal {
  readonly tokenId: string;
  readonly name: string;
  readonly models: readonly string[];
  /** Keys the HMAC of the token's signed input URLs; never sent anywhere. */
  readonly tokenHash: string;
}

/** What a claim says about the worker making it. */
export interface WorkerSighting {
  /** The claim's worker_id; absent: `default`, one worker per token. */
  readonly workerId?: string | undefined;
  readonly pool?: string | null | undefined;
  /** The claim's model patterns; absent or empty: all its token allows. */
  readonly models?: readonly string[] | undefined;
}

/** A remote-bound model with queued jobs that no live worker could claim. */
export interface RemoteWaiting {
  readonly model: string;
  readonly pool: string;
  /** Queued jobs, counted up to QUEUED_COUNT_CAP over all such models. */
  readonly queued: number;
}

/** A worker is live if seen this recently: twice the longest claim wait (30 s). */
export const LIVE_WINDOW_MS = 60_000;
/** A worker's presence row is rewritten at most this often (unless what it claims changed). */
export const PRESENCE_WRITE_MS = 5_000;
/** last_used_at is written at most this often per token, as for API tokens. */
const TOUCH_INTERVAL_US = 60_000_000;
/** The same model's "no live worker" warning is logged at most this often. */
export const UNSERVED_WARN_MS = 60_000;
/** Readiness counts queued jobs no further than this: a number for a person, not an audit. */
export const QUEUED_COUNT_CAP = 1000;
/** Live workers read per check; more than this many workers seen in a minute is beyond this design. */
const LIVE_WORKERS_MAX = 1000;
/** Presence rows not rewritten for this long are deleted (remote maintenance): the worker is gone. */
export const PRESENCE_KEEP_MS = 7 * 24 * 3_600_000;
/** A process prunes presence rows at most this often. */
export const PRESENCE_PRUNE_MS = 3_600_000;
/** Presence rows deleted per prune; a backlog goes a batch an hour, and never holds the table long. */
export const PRESENCE_PRUNE_BATCH = 100;
/** Remembered presence writes and warnings; past this the memory is simply dropped. */
const MEMORY_MAX = 10_000;

const BEARER_RE = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i;
const unauthenticated = (message: string) => new DomainError('unauthenticated', message);

function checkName(name: string): string {
  const n = name.trim();
  if (n.length === 0 || n.length > 200) throw invalid('worker token name must be 1 to 200 characters');
  return n;
}

const principalOf = (m: WorkerTokenMatch): WorkerPrincipal => ({
  tokenId: m.token.id,
  name: m.token.name,
  models: m.token.models,
  tokenHash: m.tokenHash,
});

/**
 * Worker tokens (the credentials of remote GPU workers, docs/workers.md), their authentication,
 * and the presence of the workers using them. Not workspace-scoped: the operator runs the workers.
 */
export class WorkerTokenService {
  readonly #store: Store;
  readonly #clock: Clock;
  /** Remote-bound models: path -> pool (services.bindings.remote). */
  readonly #remote: ReadonlyMap<string, string>;
  /** Presence id -> what was last written and when (ms), so most claims write nothing. */
  readonly #written = new Map<string, { readonly at: number; readonly what: string }>();
  /** Model -> when its "no live worker" warning was last logged (ms). */
  readonly #warned = new Map<string, number>();
  /** When this process last pruned presence rows (ms). */
  #prunedMs: number | undefined;

  constructor(store: Store, clock: Clock, remote: ReadonlyMap<string, string>) {
    this.#store = store;
    this.#clock = clock;
    this.#remote = remote;
  }

  #now(): number {
    return msToMicros(this.#clock.nowMs());
  }

  /** Returns the secret exactly once; only its hash is stored. */
  async create(name: string, models: readonly string[] = []): Promise<{ token: string; record: WorkerToken }> {
    const secret = newToken(WORKER_TOKEN_PREFIX);
    const record = await this.#store.workerTokens.insert({
      id: newId(),
      name: checkName(name),
      tokenHash: hashToken(secret),
      models: checkPatterns(models, 'models'),
      now: this.#now(),
    });
    return { token: secret, record };
  }

  list(): Promise<WorkerToken[]> {
    return this.#store.workerTokens.list();
  }

  /** Takes effect at the token's next request (nothing caches a worker token). */
  async revoke(tokenId: string): Promise<WorkerToken> {
    const token = await this.#store.workerTokens.revoke(tokenId, this.#now());
    if (!token) throw notFound(`worker token '${tokenId}' not found`);
    return token;
  }

  /**
   * `authorization`: every Authorization header of the request (two are ambiguous). Each call
   * reads the token's row: worker requests are few, and a revocation then holds at once everywhere.
   */
  async authenticate(authorization: readonly string[] | undefined): Promise<WorkerPrincipal> {
    if (authorization && authorization.length > 1) throw unauthenticated('more than one Authorization header; send exactly one');
    const header = authorization?.[0];
    if (!header) throw unauthenticated('missing Authorization header; send Authorization: Bearer <WORKER_TOKEN>');
    const m = BEARER_RE.exec(header);
    if (!m) throw unauthenticated('malformed Authorization header; expected Bearer <WORKER_TOKEN>');
    const secret = m[1]!;
    const found = await this.#store.workerTokens.findByHash(hashToken(secret));
    if (!found) {
      // Says which kind was sent, never whether it is valid: an API token is not even looked up.
      if (secret.startsWith(TOKEN_PREFIX)) throw unauthenticated(`an API token cannot use the worker protocol; send a worker token (${WORKER_TOKEN_PREFIX}...)`);
      throw unauthenticated('invalid worker token');
    }
    if (found.token.revokedAt !== null) throw unauthenticated('this worker token has been revoked');
    const now = this.#now();
    if (found.token.lastUsedAt === null || now - found.token.lastUsedAt >= TOUCH_INTERVAL_US) {
      // Bookkeeping: a failed write must not fail the worker's request.
      await this.#store.workerTokens.touch(found.token.id, now, now - TOUCH_INTERVAL_US).catch(() => undefined);
    }
    return principalOf(found);
  }

  /** The token's principal by id (a signed input URL names it); undefined if unknown or revoked. */
  async byId(tokenId: string): Promise<WorkerPrincipal | undefined> {
    const found = await this.#store.workerTokens.findById(tokenId);
    return found && found.token.revokedAt === null ? principalOf(found) : undefined;
  }

  /**
   * Records that a worker claimed (its presence, for readiness): written when what it claims
   * changed or PRESENCE_WRITE_MS after the last write, so a busy worker costs a write per few seconds.
   */
  async seen(principal: WorkerPrincipal, sighting: WorkerSighting): Promise<void> {
    const workerId = sighting.workerId || 'default';
    const id = `${principal.tokenId}:${workerId}`;
    const pool = sighting.pool ?? null;
    const models = [...(sighting.models ?? [])];
    const what = JSON.stringify([pool, models]);
    const nowMs = this.#clock.nowMs();
    const last = this.#written.get(id);
    if (last && last.what === what && nowMs - last.at < PRESENCE_WRITE_MS && nowMs >= last.at) return;
    try {
      await this.#store.workerTokens.upsertPresence({ id, tokenId: principal.tokenId, name: workerId, pool, models, lastSeenAt: msToMicros(nowMs) });
    } catch {
      // Bookkeeping: readiness may then report the worker late; its claim goes on.
      return;
    }
    if (this.#written.size >= MEMORY_MAX) this.#written.clear();
    this.#written.set(id, { at: nowMs, what });
  }

  /**
   * Deletes up to PRESENCE_PRUNE_BATCH presence rows not seen for PRESENCE_KEEP_MS, at most once per
   * PRESENCE_PRUNE_MS in this process (remote maintenance calls it each pass); returns how many.
   * Without this, every worker_id ever used keeps its row.
   */
  async prunePresence(): Promise<number> {
    const nowMs = this.#clock.nowMs();
    if (this.#prunedMs !== undefined && nowMs - this.#prunedMs < PRESENCE_PRUNE_MS && nowMs >= this.#prunedMs) return 0;
    this.#prunedMs = nowMs;
    return this.#store.workerTokens.prunePresence(msToMicros(nowMs - PRESENCE_KEEP_MS), PRESENCE_PRUNE_BATCH);
  }

  /** Workers seen within LIVE_WINDOW_MS of `nowMs` whose tokens are not revoked. */
  liveWorkers(nowMs: number = this.#clock.nowMs()): Promise<LiveWorker[]> {
    return this.#store.workerTokens.livePresence(msToMicros(nowMs - LIVE_WINDOW_MS), LIVE_WORKERS_MAX);
  }

  /**
   * Remote-bound models with queued jobs that no live worker could claim (readiness), and how many
   * workers are live; undefined when no model is bound to a remote pool. With `log`, each such
   * model is also warned about, at most once per UNSERVED_WARN_MS.
   */
  async unserved(log?: Log): Promise<{ liveWorkers: number; waiting: RemoteWaiting[] } | undefined> {
    if (this.#remote.size === 0) return undefined;
    const nowMs = this.#clock.nowMs();
    const live = await this.liveWorkers(nowMs);
    const uncovered = [...this.#remote].filter(([model, pool]) => !live.some((w) => scopeCovers(w, model, pool)));
    const counts = await this.#store.workerTokens.queuedCounts(
      uncovered.map(([model]) => model),
      QUEUED_COUNT_CAP,
    );
    const waiting = uncovered
      .filter(([model]) => (counts.get(model) ?? 0) > 0)
      .map(([model, pool]) => ({ model, pool, queued: counts.get(model)! }))
      .sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
    if (log) this.#warn(log, waiting, nowMs);
    return { liveWorkers: live.length, waiting };
  }

  #warn(log: Log, waiting: readonly RemoteWaiting[], nowMs: number): void {
    for (const w of waiting) {
      const last = this.#warned.get(w.model);
      if (last !== undefined && nowMs - last < UNSERVED_WARN_MS && nowMs >= last) continue;
      if (this.#warned.size >= MEMORY_MAX) this.#warned.clear();
      this.#warned.set(w.model, nowMs);
      log.warn(
        { model: w.model, pool: w.pool, queued: w.queued },
        `${w.queued} queued job(s) of ${w.model} wait for a remote worker of pool ${w.pool}, and no live worker can claim them`,
      );
    }
  }
}
