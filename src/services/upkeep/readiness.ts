import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { describeFault, infraFault } from '../../lib/infra-fault.js';
import { msToMicros } from '../../lib/time.js';
import type { DiskCheck, DiskState } from '../../outputs/disk/disk-check.js';
import type { Store } from '../../store/store.js';
import { DomainError } from '../../domain/error-catalogue.js';
import type { RemoteWaiting, WorkerTokenService } from '../remote/remote-tokens.js';
import type { EngineHealth } from '../common/engine-health.js';
import type { CircuitState } from '../../engines/circuit.js';

/** Seconds a client is told to wait when the server cannot store what it sends. */
export const STORAGE_RETRY_AFTER_S = 30;
/** A store that has not answered the readiness probe in this long counts as unreachable. */
export const STORE_PROBE_TIMEOUT_MS = 2000;

export interface ReadinessReport {
  readonly ready: boolean;
  /** Each check's verdict: `ok` or a short reason, never a server path. */
  readonly checks: { readonly store: string; readonly migrations: string; readonly disk: string };
  /**
   * Only when some model is bound to a remote pool and the store answers: how many remote workers
   * are live, and the remote-bound models whose queued jobs no live worker can claim. Never
   * makes the process unready: the API still takes jobs, which wait for a worker.
   */
  readonly remote?: { readonly liveWorkers: number; readonly waiting: readonly RemoteWaiting[] };
  /** The ffmpeg and ffprobe in use (`5.1.6-0+deb12u1 (PATH)`), when known; never a path, never a failing check. */
  readonly media?: { readonly ffmpeg: string; readonly ffprobe: string };
  /**
   * Only in a process that runs jobs (its engines built): each engine's circuit, `closed`,
   * `half_open` or `open` (docs/routing.md, "Circuits"). A detail: an open circuit never makes the
   * process unready (its jobs go to the next engine of their chain, or wait).
   */
  readonly engines?: readonly { readonly name: string; readonly state: CircuitState }[];
}

/** Which media tools this process runs, as /readyz names them. */
export type MediaToolsDetail = () => Promise<{ readonly ffmpeg: string; readonly ffprobe: string }>;

/**
 * Whether this process can do its work: the store answers and takes a write, its schema is the
 * one this code expects, and the data dir can take writes. /readyz reports it; job creation asks
 * only the disk (the store answers for itself with SQLITE_FULL and the like, mapped to 503).
 */
export class Readiness {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #disk: Pick<DiskCheck, 'check'>;
  readonly #remote: Pick<WorkerTokenService, 'unserved'> | undefined;
  readonly #media: MediaToolsDetail | undefined;
  readonly #engines: Pick<EngineHealth, 'states'> | undefined;
  #draining = false;

  /** `remote`: the remote workers' presence; absent, no remote detail is reported. `media`, `engines`: likewise the media tools, the engines' circuits. */
  constructor(store: Store, clock: Clock, disk: Pick<DiskCheck, 'check'>, remote?: Pick<WorkerTokenService, 'unserved'>, media?: MediaToolsDetail, engines?: Pick<EngineHealth, 'states'>) {
    this.#store = store;
    this.#clock = clock;
    this.#disk = disk;
    this.#remote = remote;
    this.#media = media;
    this.#engines = engines;
  }

  /**
   * The process is shutting down (SIGTERM): from now on /readyz answers 503 `draining` without
   * checking anything, so a load balancer stops sending new requests while the ones it still
   * sends are served (`drain_delay_ms`). There is no way back: a drained process exits.
   */
  startDraining(): void {
    this.#draining = true;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** `log`: where models waiting for a remote worker are warned about (at most once a minute each). */
  async check(log?: Log): Promise<ReadinessReport> {
    const [store, disk] = await Promise.all([this.#probeStore(), this.#disk.check()]);
    const checks = { store: store.store, migrations: store.migrations, disk: diskVerdict(disk) };
    const ready = Object.values(checks).every((v) => v === 'ok');
    const remote = ready ? await this.#remoteDetail(log) : undefined;
    // A detail too: a tool that cannot be run fails the jobs that need it, not the process.
    const media = await this.#media?.().catch(() => undefined);
    const circuits = this.#engines?.states();
    const engines = circuits && [...circuits].map(([name, state]) => ({ name, state }));
    return { ready, checks, ...(remote ? { remote } : {}), ...(media ? { media } : {}), ...(engines ? { engines } : {}) };
  }

  async #remoteDetail(log: Log | undefined): Promise<ReadinessReport['remote']> {
    try {
      // Undefined when no model is bound to a remote pool: the report stays as it always was.
      return await this.#remote?.unserved(log);
    } catch {
      // A detail: the store just answered the probe, and a failure here must not fail /readyz.
      return undefined;
    }
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
  // An S3 output store's bucket, checked with the data dir (outputs/s3/s3-check.ts).
  object_store_unreachable: 'object storage unreachable',
  object_store_refused: 'object storage refuses access',
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
