import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { Log } from '../../lib/log.js';
import { lineOf, lineSplitter, parseLine } from './command-protocol.js';
import type { FromProcess, ToProcess } from './command-protocol.js';
import type { CommandSettings } from '../../config/command-settings.js';

/**
 * One process of a command: spawned without a shell, fed JSON lines on stdin, its stdout read as
 * protocol messages (those of the job it runs go to that job's inbox) and everything else, with
 * its stderr, logged with the job it was running. It does not restart itself: the pool does.
 */

/** What the job that a process runs hears: its messages, or the process's end. */
export type JobEvent = Exclude<FromProcess, { type: 'ready' }> | { readonly type: 'exit'; readonly code: number | null; readonly signal: string | null };

/**
 * Variables a process inherits from the server; everything else it is given in `env`. The server's
 * own environment holds its database URL and provider keys, which a model server has no need of.
 */
const INHERITED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'SHELL', 'LD_LIBRARY_PATH', 'CUDA_VISIBLE_DEVICES', 'NVIDIA_VISIBLE_DEVICES', 'HIP_VISIBLE_DEVICES', 'SYSTEMROOT', 'WINDIR'];

/**
 * The environment of a command's process. Python writes its stdout unbuffered unless told
 * otherwise; MEDIAGEN_PROCESS_INDEX (0 to processes - 1) lets each process pick its own GPU.
 */
export function processEnv(settings: CommandSettings, slot: number, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { PYTHONUNBUFFERED: '1', MEDIAGEN_PROCESS_INDEX: String(slot) };
  for (const key of INHERITED) if (from[key] !== undefined) env[key] = from[key]!;
  return { ...env, ...settings.env };
}

/** The longest stderr or stdout line kept in the log. */
const LOGGED_LINE = 2000;
/** The stderr lines kept for the log line of a failed start: a Python traceback's end, where its cause is. */
const STDERR_TAIL_LINES = 20;

/** A queue of one job's events, read one at a time. */
export class Inbox {
  readonly #events: JobEvent[] = [];
  #waiting: { readonly promise: Promise<JobEvent>; readonly resolve: (e: JobEvent) => void } | undefined;

  push(e: JobEvent): void {
    if (this.#waiting) {
      const w = this.#waiting;
      this.#waiting = undefined;
      w.resolve(e);
    } else this.#events.push(e);
  }

  /** The next event. Called again before that one came (a race it lost), the same promise. */
  next(): Promise<JobEvent> {
    if (this.#waiting) return this.#waiting.promise;
    const e = this.#events.shift();
    if (e) return Promise.resolve(e);
    let resolve: (e: JobEvent) => void = () => undefined;
    const promise = new Promise<JobEvent>((r) => (resolve = r));
    this.#waiting = { promise, resolve };
    return promise;
  }
}

export class CommandProcess {
  readonly #child: ChildProcess;
  readonly #log: Log | undefined;
  readonly #fields: Record<string, unknown>;
  #inbox: Inbox | undefined;
  #jobId: string | undefined;
  #exit: { code: number | null; signal: string | null } | undefined;
  readonly #stderrTail: string[] = [];
  /** Resolves true at the process's `ready` line, false if it ends first. */
  readonly ready: Promise<boolean>;
  /** Resolves when the process has ended (or could not be started). */
  readonly exited: Promise<void>;
  /** Set when the engine killed it (a job it would not stop): its restart needs no backoff. */
  killed = false;
  /** Jobs it finished, whatever their outcome. */
  jobsDone = 0;

  constructor(settings: CommandSettings, slot: number, log: Log | undefined) {
    this.#log = log;
    this.#child = spawn(settings.argv[0]!, settings.argv.slice(1), {
      cwd: settings.cwd,
      env: processEnv(settings, slot),
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.#fields = { command: settings.name, slot, childPid: this.#child.pid };
    let onReady: (ok: boolean) => void = () => undefined;
    this.ready = new Promise((resolve) => (onReady = resolve));
    this.exited = new Promise((resolve) => {
      const ended = (code: number | null, signal: string | null) => {
        if (this.#exit) return;
        this.#exit = { code, signal };
        onReady(false);
        this.#inbox?.push({ type: 'exit', code, signal });
        resolve();
      };
      // `close` comes once stdout is drained too, so a `done` written just before exiting is read;
      // a grandchild holding the pipes open does not keep the end from being seen for long.
      this.#child.once('close', ended);
      this.#child.once('exit', (code, signal) => setTimeout(() => ended(code, signal), 1000).unref());
      this.#child.once('error', (err) => {
        // Not started at all (no such program, no such directory): the spawn's errno says which.
        log?.error({ ...this.#fields, err: { message: err.message, code: (err as NodeJS.ErrnoException).code } }, 'command process could not be started');
        ended(null, null);
      });
    });
    // A write to a process that has ended fails with EPIPE: its exit is what counts.
    this.#child.stdin!.on('error', () => undefined);
    this.#child.stdout!.on(
      'data',
      lineSplitter(
        (line) => this.#onLine(line, onReady),
        () => this.#log?.warn({ ...this.#fields, jobId: this.#jobId }, 'command process wrote a line longer than 1 MiB; dropped'),
      ),
    );
    this.#child.stderr!.on(
      'data',
      lineSplitter(
        (line) => {
          if (line === '') return;
          const kept = line.slice(0, LOGGED_LINE);
          this.#stderrTail.push(kept);
          if (this.#stderrTail.length > STDERR_TAIL_LINES) this.#stderrTail.shift();
          this.#log?.info({ ...this.#fields, jobId: this.#jobId, stderr: kept }, 'command process stderr');
        },
        () => undefined,
      ),
    );
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** How it ended, once it has. */
  get exitStatus(): { readonly code: number | null; readonly signal: string | null } | undefined {
    return this.#exit;
  }

  /** Its last lines on stderr (at most 20), for the server log only: they may name paths and internals. */
  get stderrTail(): readonly string[] {
    return [...this.#stderrTail];
  }

  get alive(): boolean {
    return this.#exit === undefined;
  }

  #onLine(line: string, onReady: (ok: boolean) => void): void {
    const msg = parseLine(line);
    if (msg?.type === 'ready') return onReady(true);
    if (msg && this.#inbox && msg.jobId === this.#jobId) return this.#inbox.push(msg);
    if (msg) this.#log?.warn({ ...this.#fields, jobId: this.#jobId, type: msg.type, about: msg.jobId }, 'command process wrote a message about a job it is not running; ignored');
    else if (line.trim() !== '') this.#log?.info({ ...this.#fields, jobId: this.#jobId, stdout: line.slice(0, LOGGED_LINE) }, 'command process output');
  }

  /** Starts delivering `jobId`'s messages to a new inbox; the process's end is delivered too. */
  open(jobId: string): Inbox {
    const inbox = new Inbox();
    this.#inbox = inbox;
    this.#jobId = jobId;
    if (this.#exit) inbox.push({ type: 'exit', ...this.#exit });
    return inbox;
  }

  /** The job is over for the engine: later messages about it are logged and dropped. */
  closeJob(): void {
    this.#inbox = undefined;
    this.#jobId = undefined;
    this.jobsDone++;
  }

  send(msg: ToProcess): void {
    if (this.alive && this.#child.stdin?.writable) this.#child.stdin.write(lineOf(msg));
  }

  /** Ends it now (SIGKILL): a model server that will not stop a job is not asked twice. */
  kill(): void {
    if (!this.alive) return;
    this.killed = true;
    this.#child.kill('SIGKILL');
  }

  /** Asks it to end (stdin closed, then SIGTERM), killing it after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    if (!this.alive) return;
    this.#child.stdin?.end();
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
