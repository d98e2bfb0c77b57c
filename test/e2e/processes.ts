/**
 * Child processes other than `mediagen serve` for the end-to-end tests (a remote worker, the
 * Python example worker), tracked like binary.ts tracks its own: `stopProcesses()` (call it in
 * afterEach) kills what is still running.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { BIN, RUN_TIMEOUT_MS, childEnv } from './binary.js';

export interface Proc {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves when stdout (or stderr, with `onStderr`) matches `re`; rejects on exit or after `timeoutMs`. */
  waitFor(re: RegExp, opts?: { onStderr?: boolean; timeoutMs?: number }): Promise<RegExpMatchArray>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Starts `command args` with the test's environment minus MEDIAGEN_* settings, plus `env`. */
export function startProcess(command: string, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Proc {
  const child = spawn(command, args, { env: childEnv(opts.env), cwd: opts.cwd ?? tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const poke = () => waiters.forEach((w) => w());
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    poke();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    poke();
  });
  child.once('exit', poke);
  const waitFor = (re: RegExp, o: { onStderr?: boolean; timeoutMs?: number } = {}) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timeoutMs = o.timeoutMs ?? RUN_TIMEOUT_MS;
      const done = (fn: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        fn();
      };
      const check = () => {
        const m = re.exec(o.onStderr ? err : out);
        if (m) return done(() => resolve(m));
        if (child.exitCode !== null || child.signalCode !== null) {
          done(() => reject(new Error(`${command} exited (${child.exitCode ?? child.signalCode}) before printing ${re}; stdout: ${out} stderr: ${err}`)));
        }
      };
      const timer = setTimeout(() => done(() => reject(new Error(`${command} printed no ${re} in ${timeoutMs} ms; stdout: ${out} stderr: ${err}`))), timeoutMs);
      waiters.add(check);
      check();
    });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor,
    exited: () => exited(child),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited(child);
    },
  };
}

/** `node dist/main.js remote-worker ...args`, once it has printed its start line. */
export async function startRemoteWorker(args: string[], token: string, env: Record<string, string> = {}): Promise<Proc> {
  const proc = startProcess(process.execPath, [BIN, 'remote-worker', ...args], { env: { MEDIAGEN_WORKER_TOKEN: token, ...env } });
  await proc.waitFor(/^mediagen: remote worker \S+ running up to \d+ jobs? at once/m);
  return proc;
}

/** Kills every process started here that is still running. */
export async function stopProcesses(): Promise<void> {
  await Promise.all(
    [...children].map((c) => {
      const done = exited(c);
      c.kill('SIGKILL');
      return done;
    }),
  );
}
