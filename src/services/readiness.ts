import type { Clock } from '../lib/clock.js';
import { describeFault, infraFault } from '../lib/infra-fault.js';
import { msToMicros } from '../lib/time.js';
import type { DiskCheck, DiskState } from '../outputs/disk/disk-check.js';
import type { Store } from '../store/store.js';
import { DomainError } from '../domain/errors.js';

/** Seconds a client is told to wait when the server cannot store what it sends. */
export const STORAGE_RETRY_AFTER_S = 30;
/** A store that has not answered the readiness probe in this long counts as unreachable. */
export const STORE_PROBE_TIMEOUT_MS = 2000;

export interface ReadinessReport {
  readonly ready: boolean;
  /** Each check's verdict: `ok` or a short reason, never a server path. */
  readonly checks: { readonly store: string; readonly migrations: string; readonly disk: string };
}

/**
 * Whether this process can do its work: the store answers and takes a write, its schema is the
 * one this code expects, and the data dir can take writes. /readyz reports it; job creation asks
 * only the disk (the store answers for itself with SQLITE_FULL and the like, mapped to 503).
 */
export class Readiness {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #disk: Pick<DiskCheck, 'check'>;

  constructor(store: Store, clock: Clock, disk: Pick<DiskCheck, 'check'>) {
    this.#store = store;
    this.#clock = clock;
    this.#disk = disk;
  }

  async check(): Promise<ReadinessReport> {
    const [store, disk] = await Promise.all([this.#probeStore(), this.#disk.check()]);
    const checks = { store: store.store, migrations: store.migrations, disk: diskVerdict(disk) };
    return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
  }

  /** Whether the data dir can take writes now (cached for a second); a worker claims nothing while not. */
  async canStore(): Promise<boolean> {
    return (await this.#disk.check()).ok;
  }

  /** Refuses (503 with Retry-After) a request that would store something the disk cannot take. */
  /** `what` completes "the server cannot ... right now": `store new jobs`, `store new uploads`. */
  async assertCanStore(what = 'store new jobs'): Promise<void> {
    const disk = await this.#disk.check();
    if (!disk.ok) throw storageUnavailable(disk.kind, what);
  }

  async #probeStore(): Promise<{ store: string; migrations: string }> {
    const timeout = new AbortController();
    try {
      const probe = await Promise.race([
        this.#store.probe(msToMicros(this.#clock.nowMs())),
        this.#clock.sleep(STORE_PROBE_TIMEOUT_MS, timeout.signal).then(() => 'timeout' as const),
      ]);
      if (probe === 'timeout') return { store: 'unreachable (no answer in time)', migrations: 'unknown' };
      const migrations =
        probe.pendingMigrations.length > 0
          ? `${probe.pendingMigrations.length} pending`
          : probe.unknownMigrations.length > 0
            ? `${probe.unknownMigrations.length} applied that this version does not know`
            : 'ok';
      return { store: 'ok', migrations };
    } catch (err) {
      const fault = infraFault(err);
      const store = fault && fault.kind !== 'database_unreachable' ? `not writable: ${describeFault(fault.kind)}` : 'unreachable';
      return { store, migrations: 'unknown' };
    } finally {
      timeout.abort();
    }
  }
}

/** Read after the check's name: `disk full`, `disk read-only`, ... */
const DISK_VERDICTS: Readonly<Record<string, string>> = {
  disk_full: 'full',
  read_only: 'read-only',
  too_many_files: 'out of file handles',
};

function diskVerdict(disk: DiskState): string {
  if (disk.ok) return 'ok';
  if (disk.kind === 'disk_full' && disk.freeBytes !== undefined) return 'free space below min_free_disk_bytes';
  return DISK_VERDICTS[disk.kind] ?? 'failing';
}

/** The 503 of a request the server cannot serve because its storage fails; `what` says what it cannot do. */
export function storageUnavailable(kind: Parameters<typeof describeFault>[0], what: string): DomainError {
  return new DomainError('unavailable', `the server cannot ${what} right now: ${describeFault(kind)}; retry later`, {
    retryAfterSeconds: STORAGE_RETRY_AFTER_S,
  });
}
