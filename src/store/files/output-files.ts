import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, opendir, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** The URL path under which output files are served; the server prefixes its public URL. */
export const OUTPUTS_PATH = '/outputs';

/** 24 bytes: base64url without padding is exactly 32 characters, and 192 bits cannot be guessed. */
const KEY_BYTES = 24;
const KEY_RE = /^[A-Za-z0-9_-]{32}$/;
/**
 * Where a removed key's directory goes first: one atomic rename makes every URL of the key 404 at
 * once, whatever the removal of the files then meets. The leading dot keeps it out of KEY_RE, so
 * no URL can reach it; the random tail lets the same key be retired twice.
 */
const TRASH_PREFIX = '.trash-';
const TRASH_RE = /^\.trash-([A-Za-z0-9_-]{32})-[0-9a-f]{16}$/;
/** Plain file names only: no separator and no leading dot, so a name never leaves its key's directory. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The one table from file extension to media type; anything else is served as opaque bytes. */
const CONTENT_TYPES: ReadonlyMap<string, string> = new Map([
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['mp4', 'video/mp4'],
]);

export function contentTypeOf(name: string): string {
  const dot = name.lastIndexOf('.');
  const ext = dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
  return CONTENT_TYPES.get(ext) ?? 'application/octet-stream';
}

export interface OutputFileStat {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/** An output file open for reading; whoever receives it closes `handle` (a read stream with autoClose does). */
export interface OpenOutputFile extends OutputFileStat {
  readonly handle: FileHandle;
}

// A symlink is never an output: open() must not follow one swapped in after the lstat that refused it.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

const isMissing = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/** One directory of the outputs root, as the janitor sees it. */
export interface OutputEntry {
  /** `key`: a key's live directory; `trash`: a retired one whose removal has not finished. */
  readonly kind: 'key' | 'trash';
  /** The directory's name under the root (the key itself for `key`). */
  readonly name: string;
  readonly key: string;
  /** The directory's mtime: when it was made or an entry was last added or removed in it. */
  readonly changedMs: number;
}

/**
 * Job output files: one directory per key under the root. The key is the only secret in an
 * output's URL, and every path is built from a checked key and a checked name, never from raw input.
 */
export class OutputFiles {
  readonly #root: string;

  constructor(root: string) {
    this.#root = resolve(root);
  }

  static newKey(): string {
    return randomBytes(KEY_BYTES).toString('base64url');
  }

  static isKey(text: string): boolean {
    return typeof text === 'string' && KEY_RE.test(text);
  }

  static isName(text: string): boolean {
    return typeof text === 'string' && NAME_RE.test(text) && !text.includes('..');
  }

  get root(): string {
    return this.#root;
  }

  dir(key: string): string {
    if (!OutputFiles.isKey(key)) throw new Error('not an output key');
    return join(this.#root, key);
  }

  /** Empties (or creates) the key's directory, so a job reclaimed after a crash starts clean. */
  async reset(key: string): Promise<string> {
    const dir = this.dir(key);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    return dir;
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

  /** Renames the key's directory to a fresh trash name; undefined when there is none. */
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
      const key = OutputFiles.isKey(dirent.name) ? dirent.name : TRASH_RE.exec(dirent.name)?.[1];
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

  /** The regular file `name` of `key`; undefined for anything else, including unchecked input. */
  async stat(key: string, name: string): Promise<OutputFileStat | undefined> {
    if (!OutputFiles.isKey(key) || !OutputFiles.isName(name)) return undefined;
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
  async open(key: string, name: string): Promise<OpenOutputFile | undefined> {
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
      if (s.isFile()) return { path: found.path, size: s.size, mtimeMs: s.mtimeMs, handle };
    } catch (err) {
      await handle.close();
      throw err;
    }
    await handle.close();
    return undefined;
  }

  /** The URL path of an output file: the one place that spells it. */
  urlPath(key: string, name: string): string {
    if (!OutputFiles.isKey(key) || !OutputFiles.isName(name)) throw new Error('not an output key and file name');
    return `${OUTPUTS_PATH}/${key}/${name}`;
  }

  #path(key: string, name: string): string {
    if (!OutputFiles.isName(name)) throw new Error('not an output file name');
    return join(this.dir(key), name);
  }
}
