import { EngineError, RetryableEngineError } from '../engine.js';
import { backoffMs } from '../../lib/backoff.js';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { CommandProcess } from './command-process.js';
import type { CommandSettings } from '../../config/command-settings.js';

/**
 * A command's processes: `processes` slots, each keeping one process alive. A slot starts its
 * process, waits for its `ready` line, offers it to jobs (one at a time) and, when it ends,
 * starts another: at once if the engine killed it, else after a backoff that grows while the
 * process keeps ending without having served a job. The pool starts at its first job (or
 * `start()`) and stops with `close()`. A job waits for a process while one may still be ready
 * before its deadline (docs/engines.md, "The process's life").
 */

/**
 * A job that may succeed on another attempt: its process died under it, or the process said so.
 * The runner hands it back to the queue while the job has attempts left.
 */
export class CommandRetryable extends RetryableEngineError {
  constructor(message: string) {
    super(message);
    this.name = 'CommandRetryable';
  }
}

/** What the client reads when no process of the command could start in time; the log has the cause. */
export const COULD_NOT_START_MESSAGE = 'the engine that runs this model could not start; you were not billed, submit the job again later';

/**
 * No process of the command could be ready before the job's deadline: every one keeps failing to
 * start. The server's fault, not the request's: `server_unavailable`, not billed.
 */
export class CommandCouldNotStart extends EngineError {
  constructor(command: string, failedStarts: number) {
    super('server_unavailable', COULD_NOT_START_MESSAGE, { detail: `command ${command}: its processes keep failing to start (${failedStarts} failed starts in a row); none could be ready before the job's deadline` });
    this.name = 'CommandCouldNotStart';
  }
}

/** The wait before the first restart of a process that keeps ending; it doubles with each end in a row. */
export const RESTART_BASE_MS = 1000;
/** The longest wait before a process that keeps ending is started again. */
export const MAX_RESTART_DELAY_MS = 60_000;
/** A process that lived this long before ending is restarted after the shortest wait. */
const HEALTHY_RUN_MS = 60_000;

interface Waiter {
  /** The job's deadline (epoch ms): it waits while a process may still be ready before it. */
  readonly deadlineMs: number;
  readonly resolve: (p: CommandProcess) => void;
  readonly reject: (err: unknown) => void;
}

/** A slot between a failed start and its next one. */
interface Retrying {
  /** When its next process is started (epoch ms). */
  readonly at: number;
  /** How long its last start took to fail: its next is not expected to be ready sooner. */
  readonly lastStartMs: number;
}

export class ProcessPool {
  readonly #settings: CommandSettings;
  readonly #clock: Clock;
  readonly #log: Log | undefined;
  readonly #idle: CommandProcess[] = [];
  readonly #waiters: Waiter[] = [];
  readonly #live = new Set<CommandProcess>();
  /** Per slot: its failed starts in a row. */
  readonly #startFailures: number[];
  /** Per slot: set while it waits to start again after a failed start. */
  readonly #retrying: (Retrying | undefined)[];
  readonly #closing = new AbortController();
  #slots: Promise<void>[] | undefined;

  constructor(settings: CommandSettings, clock: Clock, log?: Log) {
    this.#settings = settings;
    this.#clock = clock;
    this.#log = log;
    this.#startFailures = Array.from({ length: settings.processes }, () => 0);
    this.#retrying = Array.from({ length: settings.processes }, () => undefined);
  }

  /** Starts the processes (once); later calls do nothing. */
  start(): void {
    if (this.#slots || this.#closing.signal.aborted) return;
    this.#slots = this.#startFailures.map((_, i) => this.#slot(i));
  }

  /** The processes running now (for tests and diagnostics). */
  get pids(): number[] {
    return [...this.#live].flatMap((p) => (p.pid === undefined ? [] : [p.pid]));
  }

  /**
   * A ready, idle process, the job's alone until `release`. Rejects with the signal's reason if it
   * aborts first, and with CommandCouldNotStart once no process can be ready before `deadlineMs`.
   */
  acquire(signal: AbortSignal, deadlineMs = Number.POSITIVE_INFINITY): Promise<CommandProcess> {
    this.start();
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#closing.signal.aborted) return Promise.reject(new CommandRetryable(`command ${this.#settings.name} is shutting down`));
    const idle = this.#idle.shift();
    if (idle) return Promise.resolve(idle);
    if (this.#hopeless(deadlineMs)) return Promise.reject(this.#couldNotStart());
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal.reason);
      };
      const waiter: Waiter = {
        deadlineMs,
        resolve: (p) => {
          signal.removeEventListener('abort', onAbort);
          resolve(p);
        },
        reject: (err) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** The job is over: a live process goes to the next job; a dead one is its slot's to replace. */
  release(proc: CommandProcess): void {
    if (proc.alive && !this.#closing.signal.aborted) this.#offer(proc);
  }

  /** Stops every process (stdin closed, SIGTERM, SIGKILL after a few seconds) and starts no more. */
  async close(graceMs = 5000): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    for (const w of this.#waiters.splice(0)) w.reject(new CommandRetryable(`command ${this.#settings.name} is shutting down`));
    await Promise.all([...this.#live].map((p) => p.stop(graceMs)));
    await Promise.all(this.#slots ?? []);
  }

  #offer(proc: CommandProcess): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter.resolve(proc);
    else if (!this.#idle.includes(proc)) this.#idle.push(proc);
  }

  /**
   * Whether no process can be ready before `deadlineMs`: every slot is waiting to start again after
   * a failed start, and its next start, taking as long as its last one did, ends after it. A slot
   * starting a process or running one still may, so its jobs wait (their deadline may stop them).
   */
  #hopeless(deadlineMs: number): boolean {
    return this.#retrying.every((r) => r !== undefined && r.at + r.lastStartMs >= deadlineMs);
  }

  #couldNotStart(): CommandCouldNotStart {
    return new CommandCouldNotStart(this.#settings.name, Math.min(...this.#startFailures));
  }

  /** Fails the waiting jobs no process can be ready for in time. */
  #failHopeless(): void {
    for (const w of [...this.#waiters]) {
      if (!this.#hopeless(w.deadlineMs)) continue;
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.reject(this.#couldNotStart());
    }
  }

  async #slot(slot: number): Promise<void> {
    const { clock, settings } = { clock: this.#clock, settings: this.#settings };
    let failures = 0;
    while (!this.#closing.signal.aborted) {
      const proc = new CommandProcess(settings, slot, this.#log);
      this.#live.add(proc);
      const started = clock.nowMs();
      const ready = await this.#ready(proc);
      const fields = { command: settings.name, slot, childPid: proc.pid };
      let failedStart = false;
      if (!ready) {
        if (proc.alive && !this.#closing.signal.aborted) this.#log?.error({ ...fields, startTimeoutMs: settings.startTimeoutMs }, 'command process did not become ready in time; killing it');
        proc.kill();
        await proc.exited;
        this.#live.delete(proc);
        if (this.#closing.signal.aborted) return;
        this.#startFailures[slot]!++;
        failures++;
        failedStart = true;
        // Its stderr's end says why (a traceback's last line): for the operator, never the client.
        this.#log?.error({ ...fields, exit: proc.exitStatus, failures: this.#startFailures[slot], stderrTail: proc.stderrTail }, 'command process ended before it was ready');
      } else {
        this.#startFailures[slot] = 0;
        this.#log?.info({ ...fields, startMs: clock.nowMs() - started }, 'command process ready');
        this.#offer(proc);
        await proc.exited;
        this.#live.delete(proc);
        const i = this.#idle.indexOf(proc);
        if (i >= 0) this.#idle.splice(i, 1);
        if (this.#closing.signal.aborted) return;
        const healthy = proc.jobsDone > 0 || clock.nowMs() - started >= HEALTHY_RUN_MS;
        failures = proc.killed ? 0 : healthy ? 1 : failures + 1;
        if (!proc.killed) this.#log?.warn({ ...fields, exit: proc.exitStatus }, 'command process ended; restarting it');
      }
      if (failures > 0) {
        const delayMs = backoffMs(failures, RESTART_BASE_MS, MAX_RESTART_DELAY_MS);
        if (failedStart) {
          const now = clock.nowMs();
          this.#retrying[slot] = { at: now + delayMs, lastStartMs: now - started };
          this.#failHopeless();
        }
        try {
          await clock.sleep(delayMs, this.#closing.signal);
        } catch {
          return;
        } finally {
          this.#retrying[slot] = undefined;
        }
      }
    }
  }

  /** Whether `proc` wrote its `ready` line within the start timeout (false: it ended first, or the pool closed). */
  async #ready(proc: CommandProcess): Promise<boolean> {
    const timer = new AbortController();
    const onClose = () => timer.abort();
    this.#closing.signal.addEventListener('abort', onClose, { once: true });
    try {
      return await Promise.race([
        proc.ready,
        this.#clock.sleep(this.#settings.startTimeoutMs, timer.signal).then(
          () => false,
          () => false,
        ),
      ]);
    } finally {
      timer.abort();
      this.#closing.signal.removeEventListener('abort', onClose);
    }
  }
}
