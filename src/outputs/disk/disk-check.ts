import { mkdir, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../lib/clock.js';
import { infraFault } from '../../lib/infra-fault.js';
import type { InfraFaultKind } from '../../lib/infra-fault.js';

/** The file the write probe rewrites; a dot name is never an output key or a store file. */
export const WRITE_PROBE_FILE = '.mediagen-write-probe';

export type DiskState =
  | { readonly ok: true; readonly freeBytes: number }
  | { readonly ok: false; readonly kind: InfraFaultKind; readonly freeBytes?: number; readonly errno?: string };

/** How long one answer is reused: the check costs a statfs and a tiny write, not per request. */
export const DISK_CHECK_TTL_MS = 1000;

/**
 * Can the data dir take writes? Free space on its filesystem (statfs) at or above the floor, and a
 * probe write that succeeds (a read-only mount, a full quota, an I/O error). Shared by job creation,
 * the worker's claims and /readyz; each answer is kept for DISK_CHECK_TTL_MS, and concurrent callers
 * share one check. A caller in the second half of an answer's life starts the next check in the
 * background: under steady traffic no create and no claim waits for the disk (the wait was the tail
 * of dispatch latency, once a second, docs/benchmarks.md), and an answer is still never older than
 * the TTL.
 */
export class DiskCheck {
  readonly #dir: string;
  readonly #minFreeBytes: number;
  readonly #clock: Clock;
  #last: { at: number; state: Promise<DiskState> } | undefined;
  #refreshing = false;

  constructor(dir: string, minFreeBytes: number, clock: Clock) {
    this.#dir = dir;
    this.#minFreeBytes = minFreeBytes;
    this.#clock = clock;
  }

  check(): Promise<DiskState> {
    const now = this.#clock.nowMs();
    const last = this.#last;
    if (!last || now - last.at >= DISK_CHECK_TTL_MS || now < last.at) {
      const fresh = { at: now, state: this.#measure() };
      this.#last = fresh;
      return fresh.state;
    }
    if (now - last.at >= DISK_CHECK_TTL_MS / 2 && !this.#refreshing) {
      this.#refreshing = true;
      const state = this.#measure();
      void state.then((measured) => {
        this.#refreshing = false;
        // Unless a caller that found the answer expired measured anew meanwhile.
        if (this.#last === last) this.#last = { at: now, state: Promise.resolve(measured) };
      });
    }
    return last.state;
  }

  async #measure(): Promise<DiskState> {
    try {
      await mkdir(this.#dir, { recursive: true });
      const fs = await statfs(this.#dir);
      const freeBytes = Number(fs.bavail) * Number(fs.bsize);
      if (freeBytes < this.#minFreeBytes) return { ok: false, kind: 'disk_full', freeBytes };
      await writeFile(join(this.#dir, WRITE_PROBE_FILE), 'ok\n');
      return { ok: true, freeBytes };
    } catch (err) {
      const fault = infraFault(err);
      return { ok: false, kind: fault?.kind ?? 'io_error', errno: fault?.code ?? (err as NodeJS.ErrnoException).code };
    }
  }
}
