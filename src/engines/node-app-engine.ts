import { copyFile, link, mkdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Semaphore } from '../lib/semaphore.js';
import { GRAPH_LIMITS, outputRef, stepLevels } from '../domain/node-app-graph.js';
import type { GraphScope, GraphStep, NodeAppGraph } from '../domain/node-app-graph.js';
import { STEPS_AT_ONCE, isNodeAppJob, readPlan, stepOutputUrl } from '../domain/node-app-plan.js';
import { EngineError } from './engine.js';
import type { Engine, EngineContext, EngineJob, EngineStage, OutputFile } from './engine.js';
import { StageForwarder } from './node-app-stages.js';

export interface NodeAppEngineOptions {
  /** Runs each step's model, as it runs that model's own jobs: the router. */
  readonly steps: Engine;
  /**
   * A step's body from its input and `scope`, validated by its model as at execute, defaults
   * filled in (engines read validated requests): services/node-apps/node-app-steps.ts. Throws, naming the
   * step, when it cannot be built or the model refuses it.
   */
  prepare(step: GraphStep, scope: GraphScope): Record<string, unknown>;
}

/**
 * The worker's engine: node-app jobs (type `node-app/<slug>`) run their graph here, every other
 * job goes straight to `steps`. A graph runs level by level (domain/node-app-graph.ts
 * `stepLevels`), the steps of a level in parallel, at most STEPS_AT_ONCE at a time, each through
 * its model's engine with a context of its own (docs/node-apps.md, "Executing a node app").
 */
export class NodeAppEngine implements Engine {
  readonly name = 'node-app';
  readonly #opts: NodeAppEngineOptions;

  constructor(opts: NodeAppEngineOptions) {
    this.#opts = opts;
  }

  run(job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    if (!isNodeAppJob(job.model)) return this.#opts.steps.run(job, ctx);
    return new GraphRun(job, ctx, this.#opts).run();
  }
}

interface Made {
  readonly dir: string;
  readonly files: readonly OutputFile[];
}

/** An output name as a file name of the job (`image.png`), when it is one; else `output-<n>`. */
const FILE_BASE_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const EXT_RE = /^\.[A-Za-z0-9]{1,10}$/;

/**
 * One run of a graph. Steps write into their own directories under the job's (`.step-<id>`, a
 * name no output file can have); a later step reads an earlier one's output through the stand-in
 * URL its body carries, from that local file. The named outputs are linked into the job's
 * directory under their output names, the files `result.urls` maps them to.
 */
class GraphRun {
  readonly #job: EngineJob;
  readonly #ctx: EngineContext;
  readonly #opts: NodeAppEngineOptions;
  /** Aborted by the job's own signal, or by the first step to fail: every running step stops. */
  readonly #abort = new AbortController();
  readonly #stages: StageForwarder;
  readonly #slots = new Semaphore(STEPS_AT_ONCE, GRAPH_LIMITS.stepsMax);
  readonly #made = new Map<string, Made>();
  /** Each finished step's stand-in URLs, in the order of its outputs. */
  readonly #urls: Record<string, string[]> = {};
  /** Stand-in URL -> the step's file. */
  readonly #local = new Map<string, string>();
  /** Output name -> its file in the job's directory, once placed there. */
  readonly #placed = new Map<string, OutputFile>();
  #graph: NodeAppGraph | undefined;
  #inputs: Readonly<Record<string, unknown>> = {};
  #previewing = false;

  constructor(job: EngineJob, ctx: EngineContext, opts: NodeAppEngineOptions) {
    this.#job = job;
    this.#ctx = ctx;
    this.#opts = opts;
    this.#stages = new StageForwarder(ctx);
  }

  async run(): Promise<OutputFile[]> {
    try {
      const plan = readPlan(this.#job.request);
      this.#graph = plan.graph;
      this.#inputs = plan.inputs;
    } catch (err) {
      throw new EngineError('engine_failed', 'the job holds no runnable node-app plan', { detail: (err as Error).message, cause: err });
    }
    const parent = this.#ctx.signal;
    const onAbort = () => this.#abort.abort(parent.reason);
    if (parent.aborted) onAbort();
    else parent.addEventListener('abort', onAbort, { once: true });
    try {
      await this.#stages.reach('processing');
      for (const level of stepLevels(this.#graph)) await this.#level(level);
      const files: OutputFile[] = [];
      for (const key of Object.keys(this.#graph.outputs)) files.push(await this.#place(key));
      // A job completes from sampling at the earliest, whatever its steps reported.
      await this.#stages.reach('sampling');
      return files;
    } finally {
      parent.removeEventListener('abort', onAbort);
    }
  }

  /** The level's steps in parallel; the first to fail stops the others and is the job's error. */
  async #level(level: readonly GraphStep[]): Promise<void> {
    let failure: { readonly err: unknown } | undefined;
    await Promise.all(
      level.map((step) =>
        this.#turn(step).catch((err: unknown) => {
          if (failure) return;
          failure = { err };
          this.#abort.abort(err);
        }),
      ),
    );
    if (failure) throw failure.err;
  }

  /** The step once one of the graph's STEPS_AT_ONCE places is free; waiting ends with the run. */
  async #turn(step: GraphStep): Promise<void> {
    // The queue holds every step a level can have, so a wait is never refused.
    const release = (await this.#slots.acquire(this.#abort.signal))!;
    try {
      await this.#step(step);
    } finally {
      release();
    }
  }

  async #step(step: GraphStep): Promise<void> {
    const signal = this.#abort.signal;
    signal.throwIfAborted();
    const dir = join(this.#ctx.outDir, `.step-${step.id}`);
    await mkdir(dir, { recursive: true });
    const sub: EngineContext = {
      signal,
      outDir: dir,
      loadInput: (url, field) => this.#load(url, field),
      loadStyle: (id) => this.#ctx.loadStyle(id),
      deadlineMs: this.#ctx.deadlineMs,
      // A step's progress is not the job's; the job's stages say how far the graph is.
      progress: () => undefined,
      // A step has no row of its own to keep a provider job in: a provider-bound step of a
      // restarted graph is submitted again (docs/providers.md).
      upstream: { load: async () => undefined, save: async () => undefined },
      // A step's own preview is not the job's: the job shows a finished step's output instead.
      stage: async (stage: EngineStage) => {
        signal.throwIfAborted();
        if (stage !== 'processing') await this.#stages.reach('sampling');
        signal.throwIfAborted();
      },
    };
    const request = this.#body(step);
    let files: OutputFile[];
    try {
      // Its own id, so an engine that keys anything by job id (a seed, a log line) tells the steps apart.
      files = await this.#opts.steps.run({ id: `${this.#job.id}:${step.id}`, model: step.model, request }, sub);
      signal.throwIfAborted();
    } catch (err) {
      // Stopped from outside (or by a sibling's failure): the reason is already known.
      if (signal.aborted || !(err instanceof EngineError)) throw err;
      throw new EngineError(err.code, `step '${step.id}': ${err.message}`, { ...(err.detail === undefined ? {} : { detail: err.detail }), cause: err });
    }
    this.#made.set(step.id, { dir, files });
    const urls = files.map((_, n) => stepOutputUrl(this.#job.id, step.id, n));
    urls.forEach((url, n) => this.#local.set(url, join(dir, files[n]!.name)));
    this.#urls[step.id] = urls;
    await this.#preview(step);
  }

  /** The step's body: the inputs and earlier steps' stand-in URLs in, validated as its model's. */
  #body(step: GraphStep): Record<string, unknown> {
    try {
      return this.#opts.prepare(step, { inputs: this.#inputs, steps: this.#urls });
    } catch (err) {
      throw new EngineError('input_invalid', (err as Error).message, { cause: err });
    }
  }

  /** An earlier step's output from its file; anything else as the job loads its inputs. */
  #load(url: string, field: string): Promise<Buffer> {
    const path = this.#local.get(url);
    if (path !== undefined) return readFile(path);
    const signal = this.#abort.signal;
    // The job's loader stops with the job; a sibling's failure stops this step's wait for it.
    return new Promise<Buffer>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#ctx.loadInput(url, field).then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /**
   * While other steps still run, the first finished step that makes a named output shows it:
   * `intermediate-complete`, with `result.urls` holding that output under its name.
   */
  async #preview(step: GraphStep): Promise<void> {
    const graph = this.#graph!;
    if (this.#previewing || this.#made.size === graph.steps.length) return;
    const name = Object.keys(graph.outputs).find((key) => {
      const ref = outputRef(graph, key);
      return ref.step === step.id && ref.index < this.#made.get(step.id)!.files.length;
    });
    if (name === undefined) return;
    this.#previewing = true;
    const placed = await this.#place(name);
    // A sibling may have failed meanwhile: the job then fails, and shows no preview first.
    this.#abort.signal.throwIfAborted();
    await this.#stages.reach('intermediate-complete', placed);
  }

  /** The output's file in the job's directory (linked from its step's), named after the output. */
  async #place(key: string): Promise<OutputFile> {
    const done = this.#placed.get(key);
    if (done) return done;
    const ref = outputRef(this.#graph!, key);
    const made = this.#made.get(ref.step);
    const file = made?.files[ref.index];
    if (!made || !file) {
      throw new EngineError('input_invalid', `output '${key}': step '${ref.step}' made ${made?.files.length ?? 0} output(s), not ${ref.index + 1}`);
    }
    const name = this.#fileName(key, file.name);
    const from = join(made.dir, file.name);
    const to = join(this.#ctx.outDir, name);
    // A link costs nothing and leaves the step's file for later steps; a copy where links are refused.
    await link(from, to).catch(() => copyFile(from, to));
    const placed: OutputFile = { name, contentType: file.contentType, key };
    this.#placed.set(key, placed);
    return placed;
  }

  #fileName(key: string, source: string): string {
    const ext = EXT_RE.test(extname(source)) ? extname(source).toLowerCase() : '';
    const base = FILE_BASE_RE.test(key) ? key : `output-${Object.keys(this.#graph!.outputs).indexOf(key) + 1}`;
    const taken = new Set([...this.#placed.values()].map((f) => f.name));
    let name = `${base}${ext}`;
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}${ext}`;
    return name;
  }
}
