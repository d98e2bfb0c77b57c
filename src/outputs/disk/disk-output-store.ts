import { randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { copyFile, lstat, mkdir, open, opendir, readdir, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { isOutputKey, isOutputName, outputUrlPath } from '../output-store.js';
import type { ByteRange, OpenOutput, OutputEntry, OutputInfo, OutputScratch, OutputStore, ScratchOptions } from '../output-store.js';

/**
 * Where a removed key's directory goes first: one atomic rename makes every URL of the key 404 at
 * once, whatever the removal of the files then meets. The leading dot keeps it out of the key
 * pattern, so no URL can reach it; the random tail lets the same key be retired twice.
 */
const TRASH_PREFIX = '.trash-';
const TRASH_RE = /^\.trash-([A-Za-z0-9_-]{32})-[0-9a-f]{16}$/;
/**
 * A run's scratch directory sits inside its key's directory: a `put` is then a rename within one
 * directory, and a removal of the key (a DELETE) takes the scratch with it, so a late writer's
 * `put` fails instead of bringing the key back. The dot keeps it out of every output URL.
 */
const SCRATCH_PREFIX = '.scratch-';

// A symlink is never an output: open() must not follow one swapped in after the lstat that refused it.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

const isMissing = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/** A stored file's path with what `stat` reports. */
interface DiskFileInfo extends OutputInfo {
  readonly path: string;
}

/**
 * Job output files on the local disk: one directory per key under the root. Every path is built
 * from a checked key and a checked name, never from raw input.
 */
export class DiskOutputStore implements OutputStore {
  readonly #root: string;

  constructor(root: string) {
    this.#root = resolve(root);
  }

  /** The outputs root (disk-only: tests and the data dir check look at it). */
  get root(): string {
    return this.#root;
  }

  /** The key's directory (disk-only). */
  dir(key: string): string {
    if (!isOutputKey(key)) throw new Error('not an output key');
    return join(this.#root, key);
  }

  /** Empties (or creates) the key's directory (disk-only; `scratch` starts every run with it). */
  async reset(key: string): Promise<string> {
    const dir = this.dir(key);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    return dir;
  }

  async scratch(key: string, opts: ScratchOptions = {}): Promise<OutputScratch> {
    // Kept: mkdir (not recursive) fails when the key's directory is gone, so a removed key stays removed.
    const dir = join(opts.keep ? this.dir(key) : await this.reset(key), `${SCRATCH_PREFIX}${randomBytes(8).toString('hex')}`);
    await mkdir(dir);
    return { dir, dispose: () => rm(dir, { recursive: true, force: true }) };
  }

  async put(key: string, name: string, fromPath: string): Promise<void> {
    const to = this.#path(key, name);
    try {
      await rename(fromPath, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      // A scratch on another filesystem: copy beside the target, then rename, so no reader sees half a file.
      const part = join(this.dir(key), `.part-${randomBytes(8).toString('hex')}`);
      await copyFile(fromPath, part);
      await rename(part, to);
      await rm(fromPath, { force: true });
    }
  }

  /**
   * Removes the key's files, idempotently. The directory is first renamed to a trash name no URL
   * reaches (atomic: the key stops being served at once), then deleted. If the deletion fails
   * (ENOTEMPTY while a writer is still adding files, EBUSY, EACCES...) this throws, and the trash
   * is left for the janitor (`list` shows it, `removeEntry` deletes it).
   */
  async remove(key: string): Promise<void> {
    const trash = await this.retire(key);
    if (trash) await rm(join(this.#root, trash), { recursive: true, force: true });
  }

  /** Renames the key's directory to a fresh trash name; undefined when there is none (disk-only). */
  async retire(key: string): Promise<string | undefined> {
    const dir = this.dir(key);
    const trash = `${TRASH_PREFIX}${key}-${randomBytes(8).toString('hex')}`;
    try {
      await rename(dir, join(this.#root, trash));
      return trash;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /**
   * The root's key and trash directories, read as a stream (opendir), so a root with millions of
   * entries is never held in memory. Anything else under the root is not listed.
   */
  async *list(): AsyncGenerator<OutputEntry> {
    let dir;
    try {
      dir = await opendir(this.#root, { bufferSize: 64 });
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    // for await closes the directory handle however the loop ends.
    for await (const dirent of dir) {
      const key = isOutputKey(dirent.name) ? dirent.name : TRASH_RE.exec(dirent.name)?.[1];
      if (key === undefined) continue;
      let s;
      try {
        s = await lstat(join(this.#root, dirent.name));
      } catch (err) {
        if (isMissing(err)) continue; // removed since it was read
        throw err;
      }
      if (!s.isDirectory()) continue;
      const kind = key === dirent.name ? 'key' : 'trash';
      yield { kind, name: dirent.name, key, changedMs: s.mtimeMs };
    }
  }

  /** Deletes a listed entry: a key's directory (through the trash) or a trash directory. */
  async removeEntry(entry: Pick<OutputEntry, 'kind' | 'name'>): Promise<void> {
    if (entry.kind === 'key') return this.remove(entry.name);
    if (!TRASH_RE.test(entry.name)) throw new Error('not a trash directory');
    await rm(join(this.#root, entry.name), { recursive: true, force: true });
  }

  async removeFile(key: string, name: string): Promise<void> {
    await rm(this.#path(key, name), { force: true });
  }

  async names(key: string): Promise<string[]> {
    if (!isOutputKey(key)) return [];
    try {
      const entries = await readdir(this.dir(key), { withFileTypes: true });
      return entries.filter((e) => e.isFile() && isOutputName(e.name)).map((e) => e.name);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
  }

  /** The regular file `name` of `key`, with its path; undefined for anything else, including unchecked input. */
  async stat(key: string, name: string): Promise<DiskFileInfo | undefined> {
    if (!isOutputKey(key) || !isOutputName(name)) return undefined;
    const path = this.#path(key, name);
    try {
      const s = await lstat(path);
      return s.isFile() ? { path, size: s.size, mtimeMs: s.mtimeMs } : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /**
   * Opens the file for reading. Size and mtime come from the open descriptor, so they describe the
   * bytes that will be read even if the job is deleted meanwhile.
   */
  async open(key: string, name: string): Promise<OpenOutput | undefined> {
    // stat first: open() on a FIFO would block a libuv thread until a writer appeared.
    const found = await this.stat(key, name);
    if (!found) return undefined;
    let handle: FileHandle;
    try {
      handle = await open(found.path, OPEN_FLAGS);
    } catch (err) {
      // ELOOP: replaced by a symlink since the stat.
      if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
      throw err;
    }
    try {
      const s = await handle.stat();
      if (s.isFile()) return openFile(found.path, handle, s.size, s.mtimeMs);
    } catch (err) {
      await handle.close();
      throw err;
    }
    await handle.close();
    return undefined;
  }

  url(key: string, name: string): string {
    return outputUrlPath(key, name);
  }

  #path(key: string, name: string): string {
    if (!isOutputName(name)) throw new Error('not an output file name');
    return join(this.dir(key), name);
  }
}

function openFile(path: string, handle: FileHandle, size: number, mtimeMs: number): OpenOutput {
  return {
    size,
    mtimeMs,
    // autoClose: the handle closes when the stream ends, fails, or is destroyed because the reader left.
    stream: (range?: ByteRange): Readable => createReadStream(path, { fd: handle, start: range?.start ?? 0, ...(range ? { end: range.end } : {}) }),
    close: () => handle.close(),
  };
}
