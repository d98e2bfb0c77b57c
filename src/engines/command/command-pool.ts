import { RetryableEngineError } from '../engine.js';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { CommandProcess } from './command-process.js';
import type { CommandSettings } from '../../config/command-settings.js';

/**
 * A command's processes: `processes` slots, each keeping one process alive. A slot starts its
 * process, waits for its `ready` line, offers it to jobs (one at a time) and, when it ends,
 * starts another: at once if the engine killed it, else after a backoff that grows while the
 * process keeps ending without having served a job. The pool starts at its first job (or
 * `start()`) and stops with `close()`.
 */

/**
 * A job that may succeed on another attempt: its process died under it, the process said so, or
 * the command's processes do not start. The runner hands such a job back to the queue.
 *
 * `code` is an errno the runner already hands jobs back for (an infrastructure fault, through
 * src/lib/infra-fault.ts; not an EngineError, so a remote worker reports it `retryable` too)
 * until the runner settles `retryable` errors of their own (see docs/engines.md).
 */
export class CommandRetryable extends RetryableEngineError {
  constructor(message: string) {
    super(message);
    this.name = 'CommandRetryable';
  }
}

/** Starts in a row that failed, in every slot, before waiting jobs are handed back. */
export const START_FAILURES_BEFORE_HAND_BACK = 3;
/** The longest wait before a process that keeps ending is started again. */
export const MAX_RESTART_DELAY_MS = 60_000;
/** A process that lived this long before ending is restarted after the shortest wait. */
const HEALTHY_RUN_MS = 60_000;

export const restartDelayMs = (failures: number): number => Math.min(MAX_RESTART_DELAY_MS, 1000 * 2 ** Math.max(0, failures - 1));

interface Waiter {
  readonly resolve: (p: CommandProcess) => void;
  readonly reject: (err: unknown) => void;
}

export class ProcessPool {
  readonly #settings: CommandSettings;
  readonly #clock: Clock;
  readonly #log: Log | undefined;
  readonly #idle: CommandProcess[] = [];
  readonly #waiters: Waiter[] = [];
  readonly #live = new Set<CommandProcess>();
  readonly #startFailures: number[];
  readonly #closing = new AbortController();
  #slots: Promise<void>[] | undefined;

  constructor(settings: CommandSettings, clock: Clock, log?: Log) {
    this.#settings = settings;
    this.#clock = clock;
    this.#log = log;
    this.#startFailures = Array.from({ length: settings.processes }, () => 0);
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

  /** A ready, idle process, the job's alone until `release`. Rejects with the signal's reason if it aborts first. */
  acquire(signal: AbortSignal): Promise<CommandProcess> {
    this.start();
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#closing.signal.aborted) return Promise.reject(new CommandRetryable(`command ${this.#settings.name} is shutting down`));
    if (this.#down()) return Promise.reject(this.#downError());
    const idle = this.#idle.shift();
    if (idle) return Promise.resolve(idle);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal.reason);
      };
      const waiter: Waiter = {
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

  /** Every slot failed to start its process several times in a row. */
  #down(): boolean {
    return this.#startFailures.every((n) => n >= START_FAILURES_BEFORE_HAND_BACK);
  }

  #downError(): CommandRetryable {
    return new CommandRetryable(`command ${this.#settings.name}: its processes keep failing to start (see the log)`);
  }

  async #slot(slot: number): Promise<void> {
    const { clock, settings } = { clock: this.#clock, settings: this.#settings };
    let failures = 0;
    while (!this.#closing.signal.aborted) {
      const proc = new CommandProcess(settings, slot, this.#log);
      this.#live.add(proc);
      const started = clock.nowMs();
      const ready = await this.#ready(proc);
      const fields = { command: settings.name, slot, pid: proc.pid };
      if (!ready) {
        if (proc.alive && !this.#closing.signal.aborted) this.#log?.error({ ...fields, startTimeoutMs: settings.startTimeoutMs }, 'command process did not become ready in time; killing it');
        proc.kill();
        await proc.exited;
        this.#live.delete(proc);
        if (this.#closing.signal.aborted) return;
        this.#startFailures[slot]!++;
        failures++;
        this.#log?.error({ ...fields, exit: proc.exitStatus, failures: this.#startFailures[slot] }, 'command process ended before it was ready');
        if (this.#down()) for (const w of this.#waiters.splice(0)) w.reject(this.#downError());
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
        try {
          await clock.sleep(restartDelayMs(failures), this.#closing.signal);
        } catch {
          return;
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
