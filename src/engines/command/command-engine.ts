import { mkdir, realpath } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import { urlInputsOf } from '../../models/private-urls.js';
import { outputStem } from '../../outputs/output-store.js';
import { EngineError, JOB_ERROR_CODES, RunStopped } from '../engine.js';
import type { BindableEngine, EngineContext, EngineJob, JobErrorCode, OutputFile } from '../engine.js';
import { fillTemplate } from '../upstream/upstream-template.js';
import { takeOutput, writeInputs } from './command-files.js';
import type { OutputRules } from './command-files.js';
import { CommandCouldNotStart, CommandRetryable, ProcessPool } from './command-pool.js';
import type { CommandProcess, Inbox, JobEvent } from './command-process.js';
import type { CommandSettings } from '../../config/command-settings.js';

/** A model a command serves: its request schema (which fields are media), its output types, and an optional input template. */
export interface CommandModel {
  readonly schema: object | undefined;
  readonly outputTypes: readonly string[];
  /** An `upstream.input` template (docs/providers.md, "Templates"); absent: the request as it is. */
  readonly input?: unknown;
}

export interface CommandEngineDeps {
  readonly settings: CommandSettings;
  readonly models: ReadonlyMap<string, CommandModel>;
  readonly clock: Clock;
  readonly log?: Log;
  /** The largest file taken from a process (`worker_output_max_bytes`); default 1 GiB. */
  readonly outputMaxBytes?: number;
}

/** The codes a process may fail a job with; any other is `engine_failed`. The server's own verdicts (timeout, worker_lost, server_unavailable, input_fetch_failed) are not its to give. */
const PROCESS_CODES: ReadonlySet<string> = new Set<JobErrorCode>(['input_invalid', 'input_too_large', 'engine_failed', 'upstream_rejected', 'upstream_failed', 'upstream_unavailable', 'upstream_malformed']);
const ROLES: Readonly<Record<string, OutputFile['role'] | null>> = { output: null, model: 'model', preview: 'preview' };
const DEFAULT_OUTPUT_MAX_BYTES = 1024 * 1024 * 1024;

type Stage = 'processing' | 'sampling' | 'intermediate-complete';

/**
 * Runs models in long-running processes of the operator's (docs/engines.md, "Command engine"): a
 * diffusers script keeping its pipeline on the GPU, anything that speaks the JSON-lines protocol.
 * The processes start with the first job (or `start()`), serve one job each at a time and are
 * restarted when they end; a job whose process ends under it is handed back to the queue.
 */
export class CommandEngine implements BindableEngine {
  readonly name: string;
  readonly #deps: CommandEngineDeps;
  readonly #pool: ProcessPool;

  constructor(deps: CommandEngineDeps) {
    this.#deps = deps;
    this.name = `command:${deps.settings.name}`;
    this.#pool = new ProcessPool(deps.settings, deps.clock, deps.log);
  }

  canRun(model: string): boolean {
    return this.#deps.models.has(model);
  }

  /** Starts the processes now rather than at the first job (so the first job does not wait for the model to load). */
  start(): void {
    this.#pool.start();
  }

  /** Stops the processes; a job still running is handed back. */
  close(): Promise<void> {
    return this.#pool.close();
  }

  /** The ids of the processes running now. */
  get pids(): number[] {
    return this.#pool.pids;
  }

  async run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    const model = this.#deps.models.get(job.model);
    if (!model) throw new EngineError('engine_failed', `command ${this.#deps.settings.name} does not run ${job.model}`);
    // The run's signal is the one stop: the runner aborts it on a cancel, a lost lease, a shutdown
    // and at the job's deadline (RunStopped 'timeout'), so the deadline has one keeper.
    const { signal } = ctx;
    try {
      signal.throwIfAborted();
      const inDir = join(ctx.outDir, 'command-inputs');
      const outputDir = join(ctx.outDir, 'command-outputs');
      await mkdir(inDir, { recursive: true });
      await mkdir(outputDir, { recursive: true });
      const files = await writeInputs(urlInputsOf(model.schema, job.request), inDir, (url, field) => ctx.loadInput(url, field));
      const input = fillTemplate(model.input, job.request);
      await ctx.stage('processing');
      // With a next engine in the job's chain, the job waits for a busy process but not for processes that keep failing to start.
      const fallsBack = ctx.canFallBack === true;
      const proc = await this.#pool.acquire(signal, fallsBack ? this.#deps.clock.nowMs() : ctx.deadlineMs).catch((err: unknown) => {
        if (!(err instanceof CommandCouldNotStart)) throw err;
        if (fallsBack) throw new EngineError('server_unavailable', err.message, { cause: err, detail: err.detail, notAccepted: true });
        this.#deps.log?.warn({ command: this.#deps.settings.name, jobId: job.id, model: job.model }, "job failed: no process of its command could start before the job's deadline");
        throw err;
      });
      try {
        const root = await realpath(outputDir);
        proc.send({ type: 'job', job_id: job.id, model: job.model, input, files, output_dir: root });
        this.#deps.log?.info({ command: this.#deps.settings.name, childPid: proc.pid, jobId: job.id, model: job.model }, 'job sent to command process');
        return await this.#follow(proc, job, ctx, model, root, signal);
      } finally {
        this.#pool.release(proc);
      }
    } catch (err) {
      throw signal.aborted ? signal.reason : err;
    }
  }

  /** Reads the job's messages until its end; a stopped run or a refused file sends `cancel` first. */
  async #follow(proc: CommandProcess, job: EngineJob, ctx: EngineContext, model: CommandModel, root: string, signal: AbortSignal): Promise<OutputFile[]> {
    const inbox = proc.open(job.id);
    const aborted = new Promise<'abort'>((resolve) => {
      if (signal.aborted) resolve('abort');
      else signal.addEventListener('abort', () => resolve('abort'), { once: true });
    });
    const maxBytes = this.#deps.outputMaxBytes ?? DEFAULT_OUTPUT_MAX_BYTES;
    const rules: OutputRules = { root, allowed: model.outputTypes, maxBytes };
    let stage: Stage = 'processing';
    let finished = false;
    const sampling = async () => {
      if (stage !== 'processing') return;
      await ctx.stage('sampling');
      stage = 'sampling';
    };
    try {
      for (;;) {
        const event = await Promise.race([inbox.next(), aborted]);
        if (event === 'abort') throw signal.reason;
        finished = event.type === 'done' || event.type === 'error' || event.type === 'malformed' || event.type === 'exit';
        switch (event.type) {
          case 'exit':
            this.#deps.log?.warn({ command: this.#deps.settings.name, childPid: proc.pid, jobId: job.id, exit: { code: event.code, signal: event.signal } }, 'command process ended during a job; handing the job back');
            throw new CommandRetryable(`command ${this.#deps.settings.name}: its process ended during the job`);
          case 'progress':
            if (event.status !== 'processing') await sampling();
            if (event.fraction !== undefined) ctx.progress(event.fraction);
            break;
          case 'preview': {
            if (stage === 'intermediate-complete') break;
            await sampling();
            const file = await takeOutput(event.path, join(ctx.outDir, 'preview'), { ...rules, allowed: ['image/*', ...model.outputTypes] }, 'preview');
            await ctx.stage('intermediate-complete', { name: basename(file.path), contentType: file.contentType });
            stage = 'intermediate-complete';
            break;
          }
          case 'done':
            await sampling();
            return await this.#outputs(event.outputs, ctx.outDir, rules);
          case 'error':
            throw this.#processError(event, root);
          case 'malformed':
            throw new EngineError('engine_failed', 'the command answered with a malformed message', { detail: `command ${this.#deps.settings.name}: ${event.why}` });
        }
      }
    } catch (err) {
      if (!finished) await this.#cancel(proc, inbox, job.id, signal.aborted ? (signal.reason as unknown) : err);
      throw err;
    } finally {
      proc.closeJob();
    }
  }

  async #outputs(reported: readonly { path: string; role?: string }[], outDir: string, rules: OutputRules): Promise<OutputFile[]> {
    const files: OutputFile[] = [];
    // Named by role (`model`, `preview`; plain outputs `output`), numbered only among several of one role.
    const bases = reported.map((out) => (Object.hasOwn(ROLES, out.role ?? 'output') ? (out.role ?? 'output') : undefined));
    const nth = new Map<string, number>();
    for (const [i, out] of reported.entries()) {
      const role = ROLES[out.role ?? 'output'];
      const base = bases[i];
      if (role === undefined || base === undefined) throw new EngineError('engine_failed', 'the command reported an output with an unknown role', { detail: `output ${i + 1}: role ${JSON.stringify(out.role)}` });
      const allowed = role === 'preview' ? ['image/*', ...rules.allowed] : rules.allowed;
      const index = nth.get(base) ?? 0;
      nth.set(base, index + 1);
      const stem = outputStem(base, index, bases.filter((b) => b === base).length);
      const file = await takeOutput(out.path, join(outDir, stem), { ...rules, allowed }, `output ${i + 1}`);
      files.push({ name: basename(file.path), contentType: file.contentType, ...(role ? { role } : {}) });
    }
    return files;
  }

  /** The job's failure as the process reported it: its code if it is one a process may give, its message without our paths. */
  #processError(event: Extract<JobEvent, { type: 'error' }>, root: string): Error {
    const { settings } = this.#deps;
    const message = event.message.split(root).join('<path>').split(settings.cwd).join('<path>').trim() || 'the model failed';
    if (event.retryable) return new CommandRetryable(`command ${settings.name} failed the job, retryable (${event.code}): ${message}`);
    const code = PROCESS_CODES.has(event.code) && Object.hasOwn(JOB_ERROR_CODES, event.code) ? (event.code as JobErrorCode) : 'engine_failed';
    return new EngineError(code, message, { detail: `command ${settings.name} answered error ${event.code}` });
  }

  /**
   * Asks the process to stop the job and waits for its answer (any `done` or `error` line) for the
   * grace period; a process that has not answered by then is killed, and its slot starts another.
   */
  async #cancel(proc: CommandProcess, inbox: Inbox, jobId: string, why: unknown): Promise<void> {
    const { clock, settings, log } = this.#deps;
    proc.send({ type: 'cancel', job_id: jobId });
    const timer = new AbortController();
    const late = clock.sleep(settings.cancelGraceMs, timer.signal).then(
      () => 'late' as const,
      () => 'late' as const,
    );
    try {
      for (;;) {
        const event = await Promise.race([inbox.next(), late]);
        if (event === 'late') {
          log?.warn({ command: settings.name, childPid: proc.pid, jobId, graceMs: settings.cancelGraceMs }, 'command process did not stop a cancelled job in time; killing it');
          proc.kill();
          await proc.exited;
          return;
        }
        if (event.type === 'done' || event.type === 'error' || event.type === 'malformed' || event.type === 'exit') return;
      }
    } finally {
      timer.abort();
      log?.info({ command: settings.name, childPid: proc.pid, jobId, why: why instanceof RunStopped ? why.why : 'failed' }, 'job stopped in its command process');
    }
  }
}
