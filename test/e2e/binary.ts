/**
 * Runs the compiled `mediagen` binary (dist/main.js, built by test/global-setup.ts) as a child
 * process. Every process and temporary directory made here is tracked, and `cleanup()` (call it in
 * afterEach) kills what is still running and removes the directories.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/**
 * How long one CLI run or one server start may take before the test fails: a guard against a hung
 * process, not a measure. On a 2-core CI machine running the whole suite, a start has taken 15 s.
 */
export const RUN_TIMEOUT_MS = 30_000;

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

const children = new Set<ChildProcess>();
const dirs = new Set<string>();

/** The test process's environment without MEDIAGEN_* settings, plus `extra`. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MEDIAGEN_')) env[k] = v;
  return { ...env, ...extra };
}

/** A fresh temporary directory, removed by `cleanup()`. */
export function tempDir(prefix = 'mediagen-e2e-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(dir);
  return dir;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

function track(args: string[], opts: { env?: Record<string, string>; cwd?: string }): ChildProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: childEnv(opts.env),
    cwd: opts.cwd ?? tmpdir(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Runs `mediagen ...args` to completion (killed after RUN_TIMEOUT_MS). */
export async function run(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<RunResult> {
  const child = track(args, opts);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const [{ code, signal }] = await Promise.all([
    exited(child),
    new Promise((resolve) => child.stdout!.once('close', resolve)),
    new Promise((resolve) => child.stderr!.once('close', resolve)),
  ]);
  clearTimeout(timer);
  if (signal === 'SIGKILL') throw new Error(`mediagen ${args.join(' ')} did not finish in ${RUN_TIMEOUT_MS} ms`);
  return { code, signal, stdout, stderr };
}

/** Runs an admin command with --json and returns the parsed output; fails unless it exits 0. */
export async function adminJson<T = Record<string, unknown>>(dataDir: string, args: string[]): Promise<T> {
  const r = await run(['admin', ...args, '--data-dir', dataDir, '--json']);
  if (r.code !== 0) throw new Error(`mediagen admin ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

export interface Server {
  readonly child: ChildProcess;
  /** The URL from the first stdout line, `mediagen: serving URL (...)`. */
  readonly url: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves when stdout matches `re` (rejects after RUN_TIMEOUT_MS or if the process exits). */
  waitForStdout(re: RegExp): Promise<RegExpMatchArray>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const SERVING_RE = /^mediagen: serving (http:\/\/\S+) /;

/** Starts `mediagen serve ...args` and waits for its first stdout line. */
export async function startServer(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; firstLine?: RegExp } = {},
): Promise<Server> {
  const child = track(['serve', ...args], opts);
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const poke = () => waiters.forEach((w) => w());
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    poke();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.once('exit', poke);

  const waitForStdout = (re: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out);
        if (m) return done(() => resolve(m));
        if (child.exitCode !== null || child.signalCode !== null) {
          return done(() =>
            reject(new Error(`mediagen serve exited (${child.exitCode ?? child.signalCode}) before printing ${re}; stdout: ${out} stderr: ${err}`)),
          );
        }
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`mediagen serve printed no ${re} in ${RUN_TIMEOUT_MS} ms; stdout: ${out} stderr: ${err}`))),
        RUN_TIMEOUT_MS,
      );
      const done = (fn: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        fn();
      };
      waiters.add(check);
      check();
    });

  await waitForStdout(/\n/);
  const first = out.split('\n')[0]!;
  const m = (opts.firstLine ?? SERVING_RE).exec(first);
  if (!m) throw new Error(`first stdout line is not the serving line: ${JSON.stringify(first)}; stderr: ${err}`);
  return {
    child,
    url: m[1] ?? '',
    stdout: () => out,
    stderr: () => err,
    waitForStdout,
    exited: () => exited(child),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited(child);
    },
  };
}

/** Kills every child still running and removes every temporary directory. */
export async function cleanup(): Promise<void> {
  await Promise.all(
    [...children].map((c) => {
      const done = exited(c);
      c.kill('SIGKILL');
      return done;
    }),
  );
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

/** Bearer-authenticated request to a running server, bounded in time. */
export async function api(
  base: string,
  path: string,
  token: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal: AbortSignal.timeout(RUN_TIMEOUT_MS),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A one-line stderr message from the binary: `mediagen: ...`, no stack trace. */
export function oneLineError(r: RunResult): string {
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  if (r.code !== 1) throw new Error(`expected exit 1, got ${r.code}; stderr: ${r.stderr}`);
  if (lines.length !== 1 || !lines[0]!.startsWith('mediagen: ') || /\n\s+at /.test(r.stderr)) {
    throw new Error(`expected a one-line 'mediagen: ...' message, got: ${JSON.stringify(r.stderr)}`);
  }
  return lines[0]!;
}

/** Runs a shell command line (a printed curl line, say), bounded in time. */
export function bash(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { timeout: RUN_TIMEOUT_MS }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
