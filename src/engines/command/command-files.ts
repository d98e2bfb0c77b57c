import { constants, createWriteStream } from 'node:fs';
import { open, readlink, realpath, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { formatBytes } from '../../lib/data-uri.js';
import type { UrlInput } from '../../models/private-urls.js';
import { contentTypeOf } from '../../outputs/output-store.js';
import { EngineError } from '../engine.js';
import { sniffAsset } from '../media/media-types.js';

/**
 * Files across the command boundary. In: each media input, loaded through the run's guarded
 * loader, written into the job's input directory and named in the job line's `files`. Out: a file
 * a process names is taken only if its real path (symlinks resolved) is inside the job's
 * `output_dir`, it is a regular file within the size cap, and its bytes are of an allowed type;
 * it is then copied into the run's directory under a name of ours.
 */

/** `images[2]` -> `images`: list items are given as a list under the list's name. */
const LIST_ITEM = /^(.*)\[\d+\]$/;

/** Each media input as a file in `dir`: field -> path, or field -> paths for a list field. */
export async function writeInputs(
  media: readonly UrlInput[],
  dir: string,
  load: (url: string, field: string) => Promise<Buffer>,
): Promise<Record<string, string | string[]>> {
  const files: Record<string, string | string[]> = {};
  for (const [i, { field, url }] of media.entries()) {
    const bytes = await load(url, field);
    const sniffed = sniffAsset(bytes);
    const path = join(dir, `${i + 1}-${field.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64)}.${sniffed.ok ? sniffed.type : 'bin'}`);
    await writeFile(path, bytes, { flag: 'wx' });
    const item = LIST_ITEM.exec(field);
    if (item) {
      const list = files[item[1]!];
      files[item[1]!] = Array.isArray(list) ? [...list, path] : [path];
    } else files[field] = path;
  }
  return files;
}

/** What a process may name as a file: its types, and the cap on its size. */
export interface OutputRules {
  /** The real path of the job's `output_dir`. */
  readonly root: string;
  /** Media types the file may have; `image/*` accepts any image. */
  readonly allowed: readonly string[];
  readonly maxBytes: number;
}

const refused = (what: string, detail: string) => new EngineError('engine_failed', `the command reported ${what}`, { detail });

const isAllowed = (type: string, allowed: readonly string[]) => allowed.includes(type) || (allowed.includes('image/*') && type.startsWith('image/'));

/**
 * Copies the file a process reported (`reported`: absolute, or relative to `output_dir`) to
 * `dest` (a path of ours, without extension), returning the name's extension and media type.
 */
export async function takeOutput(reported: string, dest: string, rules: OutputRules, label: string): Promise<{ path: string; contentType: string }> {
  const candidate = isAbsolute(reported) ? reported : resolve(rules.root, reported);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (err) {
    throw refused(`${label} that does not exist`, `${label}: ${candidate}: ${(err as Error).message}`);
  }
  if (!real.startsWith(rules.root + sep)) throw refused(`${label} outside its output directory`, `${label}: ${candidate} is ${real}, outside ${rules.root}`);
  // Opened without following a symlink swapped in since realpath; on Linux the open file's own
  // path is checked again, so a directory swapped for a link cannot lead out either.
  const handle = await open(real, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0)).catch((err: unknown) => {
    throw refused(`${label} that cannot be read`, `${label}: ${real}: ${(err as Error).message}`);
  });
  try {
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => real);
    if (!opened.startsWith(rules.root + sep)) throw refused(`${label} outside its output directory`, `${label}: opened ${opened}, outside ${rules.root}`);
    const stats = await handle.stat();
    if (!stats.isFile()) throw refused(`${label} that is not a file`, `${label}: ${real}`);
    if (stats.size > rules.maxBytes) throw refused(`${label} larger than ${formatBytes(rules.maxBytes)}`, `${label}: ${real} is ${stats.size} bytes`);
    const head = Buffer.alloc(Math.min(4096, stats.size));
    await handle.read(head, 0, head.length, 0);
    const sniffed = sniffAsset(head);
    const contentType = sniffed.ok ? contentTypeOf(`f.${sniffed.type}`) : undefined;
    if (!sniffed.ok || !contentType || !isAllowed(contentType, rules.allowed)) {
      const what = sniffed.ok ? contentType : sniffed.what;
      throw refused(`${label} of a type the model does not make`, `${label}: ${real} is ${what}, not one of ${rules.allowed.join(', ')}`);
    }
    const path = `${dest}.${sniffed.type}`;
    let copied = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        copied += chunk.length;
        done(copied > rules.maxBytes ? refused(`${label} larger than ${formatBytes(rules.maxBytes)}`, `${label}: ${real} grew while read`) : null, chunk);
      },
    });
    await pipeline(handle.createReadStream({ start: 0, autoClose: false }), cap, createWriteStream(path, { flags: 'wx' }));
    return { path, contentType };
  } finally {
    await handle.close();
  }
}
