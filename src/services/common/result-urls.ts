import type { OutputFile } from '../../engines/engine.js';

/** A job result's `urls` (spec 2.2), in one of its three shapes. */
export type ResultUrls = string[] | Array<{ type: 'model' | 'preview'; url: string }> | Record<string, string>;

/** What the shape of `urls` is read from: a stored file's name, and its role or key if any. */
export type ResultFile = Pick<OutputFile, 'name' | 'role' | 'key'>;

/**
 * The result's `urls` (spec 2.2): an object of named URLs when the files have keys (a node app's
 * outputs), `{type, url}` objects when any has a model or preview role (3D), else bare URLs. One
 * rule for every run, in-process (worker/run-job.ts) and remote (remote-runs.ts), so a job's
 * result looks the same whoever ran it.
 */
export function resultUrls(files: readonly ResultFile[], url: (name: string) => string): ResultUrls {
  if (files.some((f) => f.key !== undefined)) return Object.fromEntries(files.flatMap((f) => (f.key === undefined ? [] : [[f.key, url(f.name)]])));
  if (!files.some((f) => f.role === 'model' || f.role === 'preview')) return files.map((f) => url(f.name));
  return files.map((f) => ({ type: f.role === 'preview' ? ('preview' as const) : ('model' as const), url: url(f.name) }));
}
