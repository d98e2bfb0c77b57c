import { isPlainObject } from '../../lib/plain-object.js';

/**
 * The JSON-lines protocol between the command engine and its processes (docs/engines.md, "Command
 * engine"): what the engine writes to a process's stdin, and what it reads from its stdout. One
 * JSON object per line, UTF-8. Lines that are not one of these messages are the process's own
 * output: logged, never acted upon.
 */

/** To the process: one job. `files` holds each media input as a local path (a list for a list field). */
export interface JobLine {
  readonly type: 'job';
  readonly job_id: string;
  readonly model: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly files: Readonly<Record<string, string | readonly string[]>>;
  readonly output_dir: string;
}

/** To the process: stop the job; answer it with `error` (or `done`) once stopped. */
export interface CancelLine {
  readonly type: 'cancel';
  readonly job_id: string;
}

export type ToProcess = JobLine | CancelLine;

/** An output a `done` line names: a file inside `output_dir`, with an optional role. */
export interface ReportedOutput {
  readonly path: string;
  readonly role?: string;
}

/** From the process. `ready`: the model is loaded and jobs may come. */
export type FromProcess =
  | { readonly type: 'ready' }
  | { readonly type: 'progress'; readonly jobId: string; readonly fraction: number | undefined; readonly status: string | undefined }
  | { readonly type: 'preview'; readonly jobId: string; readonly path: string }
  | { readonly type: 'done'; readonly jobId: string; readonly outputs: readonly ReportedOutput[] }
  | { readonly type: 'error'; readonly jobId: string; readonly code: string; readonly message: string; readonly retryable: boolean }
  /** A message of the protocol that cannot be used (a `done` without outputs): the job fails. */
  | { readonly type: 'malformed'; readonly jobId: string; readonly why: string };

/** The longest line read from a process; a longer one is dropped whole. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** At most this many outputs are taken from one `done`. */
export const MAX_OUTPUTS = 16;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The message a stdout line carries, or undefined when it is none (not JSON, not an object, an
 * unknown type, or a job message without a `job_id`): such a line is the process's own output.
 */
export function parseLine(line: string): FromProcess | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let msg: unknown;
  try {
    msg = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (!isPlainObject(msg)) return undefined;
  if (msg.type === 'ready') return { type: 'ready' };
  const jobId = str(msg.job_id);
  if (jobId === undefined) return undefined;
  switch (msg.type) {
    case 'progress': {
      const f = msg.fraction;
      const fraction = typeof f === 'number' && Number.isFinite(f) ? Math.min(1, Math.max(0, f)) : undefined;
      return { type: 'progress', jobId, fraction, status: str(msg.status) };
    }
    case 'preview': {
      const path = str(msg.path);
      return path === undefined ? { type: 'malformed', jobId, why: 'a preview line without a path' } : { type: 'preview', jobId, path };
    }
    case 'done':
      return done(jobId, msg.outputs);
    case 'error':
      return {
        type: 'error',
        jobId,
        code: str(msg.code) ?? 'engine_failed',
        message: typeof msg.message === 'string' ? msg.message.slice(0, 2000) : '',
        retryable: msg.retryable === true,
      };
    default:
      return undefined;
  }
}

function done(jobId: string, raw: unknown): FromProcess {
  if (!Array.isArray(raw) || raw.length === 0) return { type: 'malformed', jobId, why: 'a done line without outputs' };
  const outputs: ReportedOutput[] = [];
  for (const item of raw.slice(0, MAX_OUTPUTS)) {
    // A bare string is a path.
    const path = typeof item === 'string' ? str(item) : isPlainObject(item) ? str(item.path) : undefined;
    if (path === undefined) return { type: 'malformed', jobId, why: 'a done output without a path' };
    const role = isPlainObject(item) ? str(item.role) : undefined;
    outputs.push(role === undefined ? { path } : { path, role });
  }
  return { type: 'done', jobId, outputs };
}

/** The line written to a process's stdin. */
export const lineOf = (msg: ToProcess): string => `${JSON.stringify(msg)}\n`;

/**
 * Splits a stream's text into lines, calling `onLine` with each (without its newline). A line
 * longer than MAX_LINE_BYTES is dropped, and `onOverlong` told, so a process cannot grow our memory.
 */
export function lineSplitter(onLine: (line: string) => void, onOverlong: () => void): (chunk: Buffer) => void {
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  return (chunk) => {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      if (!skipping && size + piece.length <= MAX_LINE_BYTES) onLine(Buffer.concat([...parts, piece]).toString('utf8').replace(/\r$/, ''));
      else if (!skipping) onOverlong();
      parts = [];
      size = 0;
      skipping = false;
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0 || skipping) return;
    if (size + rest.length > MAX_LINE_BYTES) {
      onOverlong();
      parts = [];
      size = 0;
      skipping = true;
      return;
    }
    parts.push(Buffer.from(rest));
    size += rest.length;
  };
}
