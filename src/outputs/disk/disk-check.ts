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
 * probe write that succeeds (a read-only mount, a full quota, an I/O error). Shared by job creation
 * and /readyz; each answer is kept for DISK_CHECK_TTL_MS, and concurrent callers share one check.
 */
export class DiskCheck {
  readonly #dir: string;
  readonly #minFreeBytes: number;
  readonly #clock: Clock;
  #last: { at: number; state: Promise<DiskState> } | undefined;

  constructor(dir: string, minFreeBytes: number, clock: Clock) {
    this.#dir = dir;
    this.#minFreeBytes = minFreeBytes;
    this.#clock = clock;
  }

  check(): Promise<DiskState> {
    const now = this.#clock.nowMs();
    if (!this.#last || now - this.#last.at >= DISK_CHECK_TTL_MS || now < this.#last.at) {
      this.#last = { at: now, state: this.#measure() };
    }
    return this.#last.state;
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
