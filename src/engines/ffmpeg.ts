import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * Locating and running ffmpeg. design.md: "ffmpeg from PATH, else an npm package that ships the
 * binary", so `npm ci` alone suffices. Every run is killed when its signal aborts and awaited to
 * exit, so no child outlives the job that started it.
 */

/** Keeps the tail of stderr only: enough for an error message, bounded however chatty ffmpeg is. */
const STDERR_KEEP_BYTES = 64 * 1024;

export interface FfmpegRunOptions {
  readonly signal: AbortSignal;
  /** The binary to run; see `locateFfmpeg`. */
  readonly ffmpegPath: string;
  /** `error` (default) for renders; `info` when the caller parses what ffmpeg reports on stderr. */
  readonly loglevel?: 'error' | 'info';
}

/** ffmpeg ran but failed; `stderrTail` holds its last lines. */
export class FfmpegError extends Error {
  readonly exitCode: number | null;
  readonly stderrTail: string;
  constructor(exitCode: number | null, stderrTail: string) {
    super(`ffmpeg exited with code ${exitCode ?? 'none'}${stderrTail ? `: ${stderrTail}` : ''}`);
    this.name = 'FfmpegError';
    this.exitCode = exitCode;
    this.stderrTail = stderrTail;
  }
}

/**
 * Runs ffmpeg with `args` (after the common quiet, non-interactive, overwrite flags) and resolves
 * with its stderr. Rejects with `FfmpegError` on a non-zero exit, and with the signal's reason,
 * after the child has exited, when the signal aborts.
 */
export function runFfmpeg(args: readonly string[], opts: FfmpegRunOptions): Promise<string> {
  const { signal, ffmpegPath } = opts;
  if (signal.aborted) return Promise.reject(signal.reason);
  const fullArgs = ['-nostdin', '-y', '-hide_banner', '-loglevel', opts.loglevel ?? 'error', ...args];
  return new Promise<string>((resolve, reject) => {
    const child = spawn(ffmpegPath, fullArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let spawnError: Error | undefined;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.length > STDERR_KEEP_BYTES * 2) stderr = stderr.slice(-STDERR_KEEP_BYTES);
    });
    const onAbort = () => child.kill('SIGKILL');
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      spawnError = err;
    });
    // `close` comes after `error` too, once stdio is closed: the one place the run ends.
    child.on('close', (code) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(signal.reason);
      else if (spawnError) reject(new Error(`cannot run ffmpeg at ${ffmpegPath}: ${spawnError.message}`));
      else if (code === 0) resolve(stderr);
      else reject(new FfmpegError(code, lastLines(stderr, 3)));
    });
  });
}

export function lastLines(text: string, n: number): string {
  return text.trim().split(/\r?\n/).slice(-n).join(' | ');
}

/** ffmpeg on PATH is used only if it can encode H.264; some distribution builds cannot. */
async function pathFfmpegUsable(): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-encoders'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    // Not found: `error`, then `close` with no code. Resolving twice is harmless.
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0 && /\blibx264\b/.test(out) && /\baac\b/.test(out)));
  });
}

function bundledFfmpeg(): string {
  try {
    const installer = createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string };
    return installer.path;
  } catch (err) {
    // The package throws a bare string on an unsupported platform.
    throw new Error(`no usable ffmpeg: none on PATH, and @ffmpeg-installer/ffmpeg failed: ${String(err)}`);
  }
}

let located: Promise<string> | undefined;

/**
 * The ffmpeg binary to use: `explicit` if given, else `ffmpeg` on PATH when it has libx264 and
 * aac, else the binary shipped by `@ffmpeg-installer/ffmpeg`. The automatic choice is made once
 * per process. Outputs are byte-identical for identical requests only with the same binary.
 */
export function locateFfmpeg(explicit?: string): Promise<string> {
  if (explicit) return Promise.resolve(explicit);
  if (!located) {
    located = pathFfmpegUsable().then((onPath) => (onPath ? 'ffmpeg' : bundledFfmpeg()));
    // A failed lookup is not kept, so a later call can succeed once the cause is fixed.
    located.catch(() => {
      located = undefined;
    });
  }
  return located;
}
