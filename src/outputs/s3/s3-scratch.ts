import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { OutputScratch } from '../output-store.js';

/**
 * A scratch directory left this long is a dead process's (a crash, a SIGKILL): no run lives a day
 * (job timeouts are minutes), and several processes may share the root, so nothing younger is touched.
 */
const STALE_MS = 24 * 60 * 60_000;

interface Held {
  readonly key: string;
  /** The key's marker ETag when the run began: its `put`s are pinned to it. */
  readonly generation: string;
}

/**
 * Local scratch directories for an object store's runs: `<root>/<key>-<random>`, one per run, on the
 * local disk (`<dataDir>/scratch`) where engines write and ffmpeg seeks. Each is remembered with the
 * key's generation until disposed, so `put` can tell a current run's file from a superseded one's,
 * and a removal of the key takes this process's scratch of it along (as the disk store's does).
 */
export class LocalScratch {
  readonly #root: string;
  readonly #held = new Map<string, Held>();
  #swept = false;

  constructor(root: string) {
    this.#root = resolve(root);
  }

  async make(key: string, generation: string): Promise<OutputScratch> {
    await mkdir(this.#root, { recursive: true });
    if (!this.#swept) {
      this.#swept = true;
      await this.#sweepStale().catch(() => undefined);
    }
    const dir = join(this.#root, `${key}-${randomBytes(8).toString('hex')}`);
    await mkdir(dir);
    this.#held.set(dir, { key, generation });
    return { dir, dispose: () => this.#dispose(dir) };
  }

  /** The generation a run's file was written under, when `dir` is this process's scratch of `key`. */
  generationOf(dir: string, key: string): string | undefined {
    const held = this.#held.get(resolve(dir));
    return held?.key === key ? held.generation : undefined;
  }

  /** Removes every scratch directory of `key` this process holds. */
  async disposeKey(key: string): Promise<void> {
    const dirs = [...this.#held].filter(([, held]) => held.key === key).map(([dir]) => dir);
    await Promise.all(dirs.map((dir) => this.#dispose(dir)));
  }

  async #dispose(dir: string): Promise<void> {
    this.#held.delete(dir);
    await rm(dir, { recursive: true, force: true });
  }

  async #sweepStale(): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.#root)) {
      const path = join(this.#root, name);
      const s = await lstat(path).catch(() => undefined);
      if (s && now - s.mtimeMs > STALE_MS) await rm(path, { recursive: true, force: true });
    }
  }
}
