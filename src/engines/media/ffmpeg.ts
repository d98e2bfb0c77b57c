import { spawn } from 'node:child_process';
import { binaryLocator, npmBinary } from './locate-binary.js';

/**
 * Locating and running ffmpeg. design.md: "ffmpeg from PATH, else an npm package that ships the
 * binary", so `npm ci` alone suffices. Every run is killed when its signal aborts and awaited to
 * exit, so no child outlives the job that started it.
 */

/** Keeps the tail of stderr only: enough for a diagnostic, bounded however chatty ffmpeg is. */
const STDERR_KEEP_BYTES = 64 * 1024;

/**
 * Limits for a run that reads a client's input: decoding hostile bytes can cost far more than
 * their size suggests, so such a run is killed when it passes either budget.
 */
export interface DecodeBudget {
  /** Wall time; the child is killed when it passes. */
  readonly wallMs: number;
  /**
   * CPU time (user + system), enforced by the kernel through ffmpeg's `-timelimit` (RLIMIT_CPU).
   * ffprobe has no such option; its short wall time bounds it.
   */
  readonly cpuSeconds?: number;
}

export interface FfmpegRunOptions {
  readonly signal: AbortSignal;
  /** The binary to run; see `locateFfmpeg`. */
  readonly ffmpegPath: string;
  /** `error` (default) for renders; `info` when the caller parses what ffmpeg reports on stderr. */
  readonly loglevel?: 'error' | 'info';
  /** Set for every run that reads a client's input. */
  readonly budget?: DecodeBudget;
}

/**
 * ffmpeg ran but failed. The message is a diagnostic for the server log, never for a client:
 * `stderrTail` (its last lines) may name server paths.
 */
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

/** A run passed its DecodeBudget and was stopped. */
export class DecodeBudgetError extends Error {
  readonly kind: 'wall' | 'cpu';
  constructor(kind: 'wall' | 'cpu', budget: DecodeBudget) {
    super(kind === 'wall' ? `stopped after ${budget.wallMs} ms of wall time` : `stopped after ${budget.cpuSeconds ?? '?'} s of CPU time`);
    this.name = 'DecodeBudgetError';
    this.kind = kind;
  }
}

export interface ToolRun {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `binary` with `args`, collecting stdout (up to `maxStdout` characters) and the tail of
 * stderr. Rejects with `FfmpegError` on a non-zero exit, `DecodeBudgetError` past a budget, and
 * with the signal's reason, after the child has exited, when the signal aborts.
 */
export function runTool(
  binary: string,
  args: readonly string[],
  opts: { readonly signal: AbortSignal; readonly budget?: DecodeBudget; readonly maxStdout?: number; readonly name: string },
): Promise<ToolRun> {
  const { signal, budget } = opts;
  if (signal.aborted) return Promise.reject(signal.reason);
  const maxStdout = opts.maxStdout ?? 0;
  return new Promise<ToolRun>((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', maxStdout > 0 ? 'pipe' : 'ignore', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let spawnError: Error | undefined;
    let overBudget: 'wall' | 'cpu' | undefined;
    let killedByUs = false;
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      if (stdout.length < maxStdout) stdout += chunk;
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.length > STDERR_KEEP_BYTES * 2) stderr = stderr.slice(-STDERR_KEEP_BYTES);
    });
    const kill = () => {
      killedByUs = true;
      child.kill('SIGKILL');
    };
    const timer = budget
      ? setTimeout(() => {
          overBudget = 'wall';
          kill();
        }, budget.wallMs)
      : undefined;
    signal.addEventListener('abort', kill, { once: true });
    child.on('error', (err) => {
      spawnError = err;
    });
    // `close` comes after `error` too, once stdio is closed: the one place the run ends.
    child.on('close', (code, killSignal) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', kill);
      // RLIMIT_CPU: SIGXCPU at the soft limit (ffmpeg may catch it and exit), SIGKILL at the hard one.
      const cpu = budget?.cpuSeconds !== undefined && !killedByUs && (killSignal === 'SIGXCPU' || killSignal === 'SIGKILL' || /received signal 24\b/.test(stderr));
      if (cpu) overBudget = 'cpu';
      if (signal.aborted) reject(signal.reason);
      else if (spawnError) reject(new Error(`cannot run ${opts.name} at ${binary}: ${spawnError.message}`));
      else if (overBudget && budget) reject(new DecodeBudgetError(overBudget, budget));
      else if (code === 0) resolve({ stdout, stderr });
      else reject(new FfmpegError(code, lastLines(stderr, 3)));
    });
  });
}

/**
 * Runs ffmpeg with `args` (after the common quiet, non-interactive, overwrite flags) and resolves
 * with its stderr. Rejects as `runTool` does.
 */
export async function runFfmpeg(args: readonly string[], opts: FfmpegRunOptions): Promise<string> {
  const { signal, ffmpegPath, budget } = opts;
  const limit = budget?.cpuSeconds !== undefined ? ['-timelimit', String(Math.max(1, Math.ceil(budget.cpuSeconds)))] : [];
  const fullArgs = ['-nostdin', '-y', '-hide_banner', '-loglevel', opts.loglevel ?? 'error', ...limit, ...args];
  return (await runTool(ffmpegPath, fullArgs, { signal, name: 'ffmpeg', ...(budget ? { budget } : {}) })).stderr;
}

export function lastLines(text: string, n: number): string {
  return text.trim().split(/\r?\n/).slice(-n).join(' | ');
}

/**
 * The ffmpeg binary to use: `explicit` if given, else `ffmpeg` on PATH when it can encode H.264,
 * AAC and MP3 (some distribution builds cannot), else the binary shipped by `@ffmpeg-installer/ffmpeg`.
 * Outputs are byte-identical for identical requests only with the same binary.
 */
export const locateFfmpeg = binaryLocator({
  name: 'ffmpeg',
  probeArgs: ['-hide_banner', '-encoders'],
  accepts: (out) => /\blibx264\b/.test(out) && /\baac\b/.test(out) && /\blibmp3lame\b/.test(out),
  // FFmpeg 4.1 (a 2018 snapshot): used only when no current ffmpeg is configured or on PATH, with a warning at start.
  bundled: npmBinary('@ffmpeg-installer/ffmpeg', 'ffmpeg'),
});
