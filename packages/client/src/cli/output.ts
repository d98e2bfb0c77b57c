import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, extname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { outputUrls } from '../index.js';
import type { Job } from '../index.js';
import { UsageError } from './exit.js';

/** A job id as the server makes them; anything else is never part of a file name. */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A file name from the last segment of an output URL: safe characters only, unique among `taken`. */
function outputName(url: string, index: number, taken: Set<string>): string {
  const raw = new URL(url).pathname.split('/').pop() ?? '';
  let last: string;
  try {
    last = decodeURIComponent(raw);
  } catch {
    last = raw; // A malformed %-escape: the segment as sent.
  }
  const name = last.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '') || `output-${index + 1}`;
  let unique = name;
  for (let n = 2; taken.has(unique); n++) unique = `${name.slice(0, name.length - extname(name).length)}-${n}${extname(name)}`;
  taken.add(unique);
  return unique;
}

/**
 * Downloads every output of a completed job into `dir` as `<job id>-<name>` (written to a
 * `.part` file, then renamed, so a file that is there is whole). Outputs are public URLs: no
 * token is sent with them. Returns the paths written, main output first. A job id that is not a
 * UUID is refused (it comes from the server, and must not lead a path out of `dir`).
 */
export async function downloadOutputs(job: Job, dir: string, signal?: AbortSignal): Promise<string[]> {
  if (typeof job.job_id !== 'string' || !JOB_ID.test(job.job_id)) throw new Error(`the server sent a job id that is not a UUID (${JSON.stringify(String(job.job_id).slice(0, 40))})`);
  const root = resolve(dir);
  const inside = root.endsWith(sep) ? root : root + sep;
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  const taken = new Set<string>();
  for (const [i, url] of outputUrls(job).entries()) {
    const path = join(dir, `${job.job_id}-${outputName(url, i, taken)}`);
    if (!resolve(path).startsWith(inside)) throw new Error(`refusing to write ${JSON.stringify(path)}: it is not inside ${dir}`);
    const res = await fetch(url, signal ? { signal } : {});
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      throw new Error(`downloading ${basename(path)} failed: HTTP ${res.status}`);
    }
    const part = `${path}.part`;
    try {
      await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), createWriteStream(part));
      await rename(part, path);
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
    written.push(path);
  }
  return written;
}

/** A `--set` value: JSON when it parses as JSON, else the text itself. */
export function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Sets `key=value` in `body`; dots in the key make nested objects (`styles` arrays take JSON). */
export function setField(body: Record<string, unknown>, assignment: string, value?: unknown): void {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set takes key=value, got '${assignment}'`);
  const path = assignment.slice(0, eq).split('.');
  if (path.some((p) => p === '' || FORBIDDEN_KEYS.has(p))) throw new UsageError(`--set: bad key '${assignment.slice(0, eq)}'`);
  let target = body;
  for (const segment of path.slice(0, -1)) {
    const next = target[segment];
    if (next === undefined) target[segment] = {};
    else if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      throw new UsageError(`--set ${assignment.slice(0, eq)}: '${segment}' is already set to a value that is not an object`);
    }
    target = target[segment] as Record<string, unknown>;
  }
  target[path[path.length - 1]!] = value === undefined ? parseValue(assignment.slice(eq + 1)) : value;
}

/**
 * The file a `--set key=@FILE` names, undefined for any other value. `@@text` is the text `@text`
 * (returned as `literal`), as curl reads `@` in a form field.
 */
export function fileOfAssignment(assignment: string): { file: string } | { literal: string } | undefined {
  const value = assignment.slice(assignment.indexOf('=') + 1);
  if (assignment.indexOf('=') <= 0 || !value.startsWith('@')) return undefined;
  if (value.startsWith('@@')) return { literal: value.slice(1) };
  if (value.length === 1) throw new UsageError(`--set ${assignment}: give a file after '@' (or '@@' for a text starting with '@')`);
  return { file: value.slice(1) };
}

/** Uploads a local file (POST /assets) and gives the URL a request field takes. */
export type Uploader = (file: string) => Promise<string>;

/**
 * The request body: --body's JSON object (a file, or `-` for stdin), then --prompt, then each --set;
 * a `--set key=@FILE` uploads FILE through `upload` and sets the key to the asset's URL.
 */
export async function buildBody(
  opts: { body?: string | undefined; prompt?: string | undefined; set?: string[] | undefined },
  stdin: () => Promise<string>,
  upload?: Uploader,
): Promise<Record<string, unknown>> {
  let body: Record<string, unknown> = {};
  if (opts.body !== undefined) {
    let text: string;
    try {
      text = opts.body === '-' ? await stdin() : await readFile(opts.body, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read --body ${opts.body}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new UsageError(`--body ${opts.body} is not JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`--body ${opts.body} must hold a JSON object`);
    body = parsed as Record<string, unknown>;
  }
  if (opts.prompt !== undefined) body.prompt = opts.prompt;
  // Every assignment is checked before the first upload, so a typo costs no upload.
  const sets = (opts.set ?? []).map((assignment) => ({ assignment, from: fileOfAssignment(assignment) }));
  for (const { assignment } of sets) setField({}, assignment);
  for (const { assignment, from } of sets) {
    if (from === undefined) setField(body, assignment);
    else if ('literal' in from) setField(body, assignment, from.literal);
    else {
      if (!upload) throw new UsageError(`--set ${assignment}: this command cannot upload files`);
      setField(body, assignment, await upload(from.file));
    }
  }
  return body;
}

/** All of stdin as text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
