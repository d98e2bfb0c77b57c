import { existsSync, rmSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { invalid } from '../../domain/error-catalogue.js';
import type { Clock } from '../../lib/clock.js';
import type { Store } from '../../store/store.js';

export interface BackupReport {
  /** The absolute path of the copy. */
  readonly file: string;
  readonly bytes: number;
  readonly took_ms: number;
}

/**
 * `mediagen admin store backup`: a consistent copy of the embedded store, taken while servers keep
 * running on it (docs/operations.md). PostgreSQL has its own tools, which know its replication and
 * point-in-time recovery; this refuses it with a pointer to them.
 */
export class StoreBackup {
  readonly #store: Pick<Store, 'backup'>;
  readonly #clock: Clock;

  constructor(store: Pick<Store, 'backup'>, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  async backup(toFile: string): Promise<BackupReport> {
    const backup = this.#store.backup;
    if (!backup) throw invalid('a PostgreSQL store is backed up with pg_dump or its own replication, not by mediagen (docs/operations.md)');
    const file = isAbsolute(toFile) ? toFile : resolve(toFile);
    if (existsSync(file)) throw invalid(`${toFile} already exists; a backup never overwrites a file`);
    const started = this.#clock.nowMs();
    try {
      const bytes = await backup(file);
      return { file, bytes, took_ms: this.#clock.nowMs() - started };
    } catch (err) {
      // A half-written copy would look like a backup.
      rmSync(file, { force: true });
      throw err;
    }
  }
}
