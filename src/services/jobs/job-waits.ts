import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { DomainError, notFound } from '../../domain/error-catalogue.js';
import { isTerminal } from '../../domain/states.js';
import type { JobHistory, JobSummary, JobTransition, Store } from '../../store/store.js';
import type { AuthContext } from '../identity/identity.js';
import type { JobSignals } from './job-signals.js';
import { Watch } from './job-watch.js';
import { toJobView } from '../common/job-view.js';
import type { JobView } from '../common/job-view.js';

/** `Prefer: wait=N`: N at most this (docs/clients.md). */
export const MAX_WAIT_SECONDS = 60;
/** An SSE stream with nothing to say sends a heartbeat this often, so proxies keep it open. */
export const HEARTBEAT_MS = 15_000;
/** Open event streams per workspace in one process; more answer too_many_streams. */
export const STREAMS_PER_WORKSPACE = 32;
/** Waiting creation requests per workspace in one process; more are answered at once. */
export const WAITS_PER_WORKSPACE = 128;
/** Open event streams in one process, all workspaces together; more answer too_many_streams. */
export const STREAMS_PER_PROCESS = 256;
/** Waiting creation requests in one process, all workspaces together; more are answered at once. */
export const WAITS_PER_PROCESS = 512;
/** Seconds a refused stream is told to wait. */
export const STREAMS_RETRY_AFTER_S = 5;
/** Transitions read per query; a job has a few dozen at most (requeues are bounded). */
const TRANSITIONS_PER_READ = 100;

export interface JobWaitOptions {
  /** The backstop poll of every waiter (`poll_interval_ms`): a lost event costs at most this. */
  readonly pollMs: number;
  readonly heartbeatMs?: number;
  readonly streamsPerWorkspace?: number;
  readonly waitsPerWorkspace?: number;
  readonly streamsPerProcess?: number;
  readonly waitsPerProcess?: number;
}

/** What a job's stream says: a status (`end` for the terminal one), the job's deletion, or nothing for a while. */
export type JobStreamEvent =
  | { readonly kind: 'status' | 'end'; readonly id: number; readonly job: JobView }
  | { readonly kind: 'deleted'; readonly jobId: string }
  | { readonly kind: 'idle' };

/** A waited job, and whether it was waited for (false: the workspace held its maximum of waits). */
export interface Waited {
  readonly job: JobView;
  readonly applied: boolean;
}

/**
 * Waiting for a job to change, for `Prefer: wait`, the SSE stream, the MCP tool's wait and any later
 * client. A waiter holds no database connection and no worker slot: it reads the job, then sleeps
 * until the job's `changed` event (this process's, or another's through `JobSignals.hearOthers`),
 * the backstop poll, its deadline or its abort, and reads again. Every wait goes through the clock.
 */
export class JobWaits {
  readonly #store: Store;
  readonly #signals: JobSignals;
  readonly #clock: Clock;
  readonly #opts: Required<JobWaitOptions>;
  readonly #held = { wait: new Map<string, number>(), stream: new Map<string, number>() };
  readonly #total = { wait: 0, stream: 0 };
  #others: Promise<(() => Promise<void>) | undefined> | undefined;

  constructor(store: Store, signals: JobSignals, clock: Clock, opts: JobWaitOptions) {
    this.#store = store;
    this.#signals = signals;
    this.#clock = clock;
    this.#opts = {
      heartbeatMs: HEARTBEAT_MS,
      streamsPerWorkspace: STREAMS_PER_WORKSPACE,
      waitsPerWorkspace: WAITS_PER_WORKSPACE,
      streamsPerProcess: STREAMS_PER_PROCESS,
      waitsPerProcess: WAITS_PER_PROCESS,
      ...opts,
    };
  }

  /**
   * The caller's job once it reaches a terminal status, or as it is when `ms` have passed or
   * `signal` aborts; `onChange` hears the status first read and each change seen after it. Not
   * found as for GET. Past the workspace's (or the process's) maximum of waits the job is answered
   * at once (`applied` false).
   */
  async waitForEnd(auth: AuthContext, id: string, ms: number, signal: AbortSignal, onChange?: (job: JobView) => Promise<void>): Promise<Waited> {
    const jobId = jobIdOf(id);
    const watch = await this.#watch(jobId);
    const release = this.#hold('wait', auth.workspace.id);
    const deadline = this.#clock.nowMs() + (release ? ms : 0);
    try {
      let seen: JobView | undefined;
      for (;;) {
        watch.clear();
        const job = await this.#store.jobs.getJobSummary(auth.apiUserId, jobId);
        if (!job) throw notFound(`job '${id}' not found`);
        const view = toJobView(job);
        // The status first read is heard too: a job that ended before the first read (a worker
        // faster than the create's answer) still tells the waiter how it ended.
        if (!seen || seen.status !== view.status) await onChange?.(view);
        seen = view;
        const left = deadline - this.#clock.nowMs();
        if (isTerminal(view.status) || left <= 0 || signal.aborted) return { job: view, applied: release !== undefined };
        await watch.next(Math.min(left, this.#opts.pollMs), signal);
      }
    } finally {
      watch.close();
      release?.();
    }
  }

  /**
   * The caller's job's status changes after transition `afterId` (0: from its creation), then live,
   * until its terminal status (`end`) or its deletion, or until `signal` aborts. Throws not found
   * before anything streams, and too_many_streams past the workspace's or the process's maximum.
   * Undefined when the job ended at or before `afterId` (nothing will ever follow), or when `signal`
   * aborted meanwhile.
   */
  async stream(auth: AuthContext, id: string, afterId: number, signal: AbortSignal): Promise<AsyncGenerator<JobStreamEvent> | undefined> {
    const jobId = jobIdOf(id);
    const watch = await this.#watch(jobId);
    try {
      watch.clear();
      const first = await this.#history(auth, jobId, afterId);
      if (!first) throw notFound(`job '${id}' not found`);
      // Nothing will ever follow, or the client left during the read: nothing to stream.
      if ((first.transitions.length === 0 && isTerminal(first.job.status)) || signal.aborted) {
        watch.close();
        return undefined;
      }
      if (this.#total.stream >= this.#opts.streamsPerProcess) {
        throw new DomainError('too_many_streams', `this server already has ${this.#opts.streamsPerProcess} open job event streams; retry later or poll GET /jobs/{id}`, {
          retryAfterSeconds: STREAMS_RETRY_AFTER_S,
        });
      }
      const release = this.#hold('stream', auth.workspace.id);
      if (!release) {
        throw new DomainError('too_many_streams', `this workspace already has ${this.#opts.streamsPerWorkspace} open job event streams on this server; close one or retry later`, {
          retryAfterSeconds: STREAMS_RETRY_AFTER_S,
        });
      }
      // Let go when the generator ends, and also when the signal aborts: a generator closed before
      // its first step never runs its `finally`.
      const done = () => {
        signal.removeEventListener('abort', done);
        watch.close();
        release();
      };
      signal.addEventListener('abort', done, { once: true });
      if (signal.aborted) {
        done();
        return undefined;
      }
      return closedBy(this.#events(auth, jobId, first, watch, done, signal), done);
    } catch (err) {
      watch.close();
      throw err;
    }
  }

  /** How many waits and streams the workspace (without one: all workspaces) holds in this process now. */
  holding(workspaceId?: string): { readonly waits: number; readonly streams: number } {
    if (workspaceId === undefined) return { waits: this.#total.wait, streams: this.#total.stream };
    return { waits: this.#held.wait.get(workspaceId) ?? 0, streams: this.#held.stream.get(workspaceId) ?? 0 };
  }

  /** Stops hearing other processes (the HTTP app's close). */
  async close(): Promise<void> {
    const others = this.#others;
    this.#others = undefined;
    await (await others)?.();
  }

  async *#events(
    auth: AuthContext,
    jobId: string,
    first: History,
    watch: Watch,
    done: () => void,
    signal: AbortSignal,
  ): AsyncGenerator<JobStreamEvent> {
    const { pollMs, heartbeatMs } = this.#opts;
    try {
      let history: History | undefined = first;
      let lastSent = this.#clock.nowMs();
      for (;;) {
        if (!history) {
          yield { kind: 'deleted', jobId };
          return;
        }
        const { job, transitions, more } = history;
        for (const [i, t] of transitions.entries()) {
          const latest = !more && i === transitions.length - 1;
          const ended = latest && isTerminal(t.status);
          yield { kind: ended ? 'end' : 'status', id: t.id, job: latest ? toJobView(job) : catchUpView(job, t) };
          lastSent = this.#clock.nowMs();
          if (ended) return;
        }
        const afterId = transitions.at(-1)?.id ?? history.afterId;
        // Ended with nothing after `afterId` (a Last-Event-ID past the job's last id): nothing will
        // ever follow; the client's reconnect gets 204.
        if (!more && transitions.length === 0 && isTerminal(job.status)) return;
        if (!more) {
          if (this.#clock.nowMs() - lastSent >= heartbeatMs) {
            yield { kind: 'idle' };
            lastSent = this.#clock.nowMs();
          }
          await watch.next(Math.min(pollMs, lastSent + heartbeatMs - this.#clock.nowMs()), signal);
          if (signal.aborted) return;
          watch.clear();
        }
        history = await this.#history(auth, jobId, afterId);
      }
    } finally {
      done();
    }
  }

  async #history(auth: AuthContext, jobId: string, afterId: number): Promise<History | undefined> {
    const h: JobHistory<JobSummary> | undefined = await this.#store.jobs.transitions(auth.apiUserId, jobId, afterId, TRANSITIONS_PER_READ + 1);
    if (!h) return undefined;
    const more = h.transitions.length > TRANSITIONS_PER_READ;
    return { job: h.job, transitions: more ? h.transitions.slice(0, TRANSITIONS_PER_READ) : h.transitions, more, afterId };
  }

  /** Subscribed before the first read, so no change between that read and the wait is missed. */
  async #watch(jobId: string): Promise<Watch> {
    const watch = new Watch(this.#signals, jobId, this.#clock);
    await this.#hearOthers();
    return watch;
  }

  /** Other processes' events from the first wait on; if that fails, the poll alone (tried again next time). */
  async #hearOthers(): Promise<void> {
    const others = (this.#others ??= this.#signals.hearOthers().catch(() => undefined));
    if (!(await others) && this.#others === others) this.#others = undefined;
  }

  #hold(kind: 'wait' | 'stream', workspaceId: string): (() => void) | undefined {
    const counts = this.#held[kind];
    const max = kind === 'wait' ? this.#opts.waitsPerWorkspace : this.#opts.streamsPerWorkspace;
    const maxTotal = kind === 'wait' ? this.#opts.waitsPerProcess : this.#opts.streamsPerProcess;
    const n = counts.get(workspaceId) ?? 0;
    if (n >= max || this.#total[kind] >= maxTotal) return undefined;
    counts.set(workspaceId, n + 1);
    this.#total[kind] += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total[kind] -= 1;
      const left = (counts.get(workspaceId) ?? 1) - 1;
      if (left > 0) counts.set(workspaceId, left);
      else counts.delete(workspaceId);
    };
  }
}

interface History {
  readonly job: JobSummary;
  readonly transitions: readonly JobTransition[];
  /** More transitions follow the last one read. */
  readonly more: boolean;
  readonly afterId: number;
}

/**
 * `gen`, whose `return()` also runs `onClose`: a generator closed before its first step (a client
 * gone before the first event was asked for) never runs its own `finally`.
 */
function closedBy<T>(gen: AsyncGenerator<T>, onClose: () => void): AsyncGenerator<T> {
  const close = gen.return.bind(gen);
  gen.return = (value) => {
    onClose();
    return close(value);
  };
  return gen;
}

/** Unknown and malformed ids are simply not found, as for GET /jobs/{id}. */
function jobIdOf(id: string): string {
  if (!isUuid(id)) throw notFound(`job '${id}' not found`);
  return id.toLowerCase();
}

/**
 * A status the job has already left when the stream reports it (a catch-up): the job as it was
 * then, so far as its history tells, without what belongs to a later status (result, error,
 * completed_at).
 */
function catchUpView(job: JobSummary, t: JobTransition): JobView {
  const { job_id, type, created_at } = toJobView(job);
  return { job_id, type, status: t.status, created_at };
}
