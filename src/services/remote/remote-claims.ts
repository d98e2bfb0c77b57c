import { REMOTE_PREFIX } from '../../engines/bindings.js';
import type { EngineBindings } from '../../engines/bindings.js';
import { EngineError } from '../../engines/engine.js';
import type { StyleArtifact } from '../../engines/engine.js';
import type { Log } from '../../lib/log.js';
import { formatMicros, msToMicros } from '../../lib/time.js';
import { resolveUrl } from '../../lib/urls.js';
import type { Catalog } from '../../models/catalog.js';
import { bodyValidator } from '../../models/validation.js';
import type { BodyValidator } from '../../models/validation.js';
import { isPlainObject } from '../../lib/plain-object.js';
import type { ClaimedJob } from '../jobs/job-runs.js';
import type { JobRoutes } from '../jobs/job-routes.js';
import type { JobSignals } from '../jobs/job-signals.js';
import { HeldJobs, claimTypes, jobFields } from './remote-jobs.js';
import type { RemoteDeps } from './remote-jobs.js';
import { REMOTE_PATH_PREFIX } from './remote-constants.js';
import { signedInputs } from './remote-inputs.js';
import { ClaimRequest } from './remote-views.js';
import type { ClaimAnswerView, ClaimRequestBody, ClaimedJobView } from './remote-views.js';
import { checkPatterns } from './remote-patterns.js';
import { UNSERVED_WARN_MS } from './remote-tokens.js';
import type { WorkerPrincipal, WorkerTokenService } from './remote-tokens.js';

const validateClaim: BodyValidator = bodyValidator(ClaimRequest);

export interface ClaimDeps extends RemoteDeps {
  readonly catalog: Pick<Catalog, 'get'>;
  readonly signals: Pick<JobSignals, 'onQueued'>;
  readonly tokens: Pick<WorkerTokenService, 'seen' | 'byId'>;
  /** A trained style's artifact (StyleService.artifact): input_invalid when it is gone. */
  loadStyle(id: string): Promise<StyleArtifact>;
  /** The longest wait between two looks at the queue while a claim waits (`poll_interval_ms`). */
  readonly pollMs: number;
  /** Each model's chain, and where a claimed job's route is written (docs/routing.md). */
  readonly bindings: Pick<EngineBindings, 'chain'>;
  readonly routes: Pick<JobRoutes, 'record'>;
}

/** How a claim's long poll ends: `signal` aborts when its client goes away or the server starts closing. */
export interface ClaimWait {
  readonly signal: AbortSignal;
  /** The client went away: what the claim took cannot reach it. */
  readonly clientGone: boolean;
}

/**
 * `POST /worker/v1/claim`: takes up to `max` queued jobs of the models the worker may run, waiting
 * up to `wait_ms` for one when none is queued. The wait holds no database connection: it sleeps
 * on the clock and wakes at once when a job is queued in this process or announced by another
 * (JobSignals), looking again at least every `pollMs`, and ends when `wait.signal` aborts (the
 * client went away, or the server is closing): then it takes no more and answers what it took.
 */
export class RemoteClaims {
  readonly #deps: ClaimDeps;
  readonly #held: HeldJobs;
  /** When each (token, worker id) whose claims can take nothing was last warned about. */
  readonly #idleWarned = new Map<string, number>();

  constructor(deps: ClaimDeps) {
    this.#deps = deps;
    this.#held = new HeldJobs(deps);
  }

  /** `log`: the claim call's logger (its lines carry the call's `requestId`). */
  async claim(worker: WorkerPrincipal, body: unknown, publicUrl: string, wait: ClaimWait, log: Log = this.#deps.log): Promise<ClaimAnswerView> {
    const { signal } = wait;
    validateClaim(body);
    const req = body as ClaimRequestBody & { max: number; wait_ms: number };
    const models = req.models === undefined ? undefined : checkPatterns(req.models, 'models');
    const { types, idle } = claimTypes(this.#deps.remote, worker, { ...(models ? { models } : {}), ...(req.pool !== undefined ? { pool: req.pool } : {}) });
    if (idle !== undefined) this.#warnIdle(worker, req.worker_id, idle, log);
    await this.#deps.tokens.seen(worker, { workerId: req.worker_id, pool: req.pool ?? null, models: models ?? [] });
    const { clock } = this.#deps;
    const until = clock.nowMs() + req.wait_ms;
    for (let waited = false; ; waited = true) {
      // Listening before looking: a job queued between the look and the wait still wakes it.
      const woken = new AbortController();
      const off = this.#deps.signals.onQueued(() => woken.abort());
      try {
        if (signal.aborted) return { jobs: [] };
        // A token revoked during the wait takes nothing; its next claim is refused (401).
        if (waited && !(await this.#deps.tokens.byId(worker.tokenId))) return { jobs: [] };
        const jobs = types.length > 0 ? await this.#take(worker, types, req.max, publicUrl, wait, log) : [];
        const left = until - clock.nowMs();
        if (jobs.length > 0 || left <= 0 || signal.aborted) return { jobs };
        await clock.sleep(Math.min(left, this.#deps.pollMs), AbortSignal.any([woken.signal, signal])).catch(() => undefined);
        if (signal.aborted) return { jobs: [] };
      } finally {
        off();
      }
    }
  }

  /**
   * Warns that a worker's claims can take no model, and why: at most once a minute per token and
   * worker id (it claims again at once, all day long).
   */
  #warnIdle(worker: WorkerPrincipal, workerId: string | undefined, why: string, log: Log): void {
    const now = this.#deps.clock.nowMs();
    const key = `${worker.tokenId}:${workerId ?? 'default'}`;
    const last = this.#idleWarned.get(key);
    if (last !== undefined && now - last < UNSERVED_WARN_MS && now >= last) return;
    if (this.#idleWarned.size >= 1000) for (const [k, at] of this.#idleWarned) if (now - at >= UNSERVED_WARN_MS) this.#idleWarned.delete(k);
    this.#idleWarned.set(key, now);
    log.warn({ workerToken: worker.tokenId, workerId: workerId ?? 'default' }, `claims of worker ${workerId ?? 'default'} can take no model: ${why}`);
  }

  /**
   * Claims up to `max` jobs now, fewer once `wait.signal` aborts. A client gone meanwhile gets none:
   * they go back to the queue. A server closing (a rolling restart) still answers a connected client
   * with what it took: handing those back would count an attempt toward worker_lost for nothing.
   */
  async #take(worker: WorkerPrincipal, types: string[], max: number, publicUrl: string, wait: ClaimWait, log: Log): Promise<ClaimedJobView[]> {
    const taken: ClaimedJobView[] = [];
    const held: ClaimedJob[] = [];
    try {
      while (taken.length < max && !wait.signal.aborted) {
        const job = await this.#deps.runs.claim({ only: types });
        if (!job) break;
        let view: ClaimedJobView | undefined;
        try {
          view = await this.#ready(worker, job, publicUrl, log);
        } catch (err) {
          // Not yet among `held`: it goes back with them rather than stay scheduled until its lease lapses.
          held.push(job);
          throw err;
        }
        if (!view) continue;
        held.push(job);
        taken.push(view);
      }
    } catch (err) {
      await this.#giveBack(held);
      throw err;
    }
    if (wait.clientGone) {
      await this.#giveBack(held);
      return [];
    }
    try {
      for (const job of held) await this.#route(job);
    } catch (err) {
      await this.#giveBack(held);
      throw err;
    }
    return taken;
  }

  /**
   * A job of a chain handed to its pool's worker records that step, as the router records an
   * in-process run's (one engine alone records none): its details and usage by engine name the
   * pool. A lease lost meanwhile records nothing; the worker's next call hears why.
   */
  async #route(job: ClaimedJob): Promise<void> {
    const chain = this.#deps.bindings.chain(job.type);
    const pool = this.#deps.remote.get(job.type);
    if (!chain || chain.engines.length < 2 || pool === undefined) return;
    const engine = `${REMOTE_PREFIX}${pool}`;
    await this.#deps.routes.record(job, [{ engine, outcome: 'ran', at: new Date(this.#deps.clock.nowMs()).toISOString() }], engine);
  }

  /**
   * A claimed job made ready for its worker: a job already past its deadline (requeued late) fails
   * with `timeout`, one naming a style that is gone fails with `input_invalid`; otherwise its key
   * starts clean (what an earlier attempt uploaded is gone) and its view is built.
   */
  async #ready(worker: WorkerPrincipal, job: ClaimedJob, publicUrl: string, log: Log): Promise<ClaimedJobView | undefined> {
    const { runs, clock, outputs } = this.#deps;
    if (msToMicros(clock.nowMs()) >= runs.deadline(job)) {
      await this.#held.timeOut(job, log);
      return undefined;
    }
    let styles: Record<string, StyleArtifact>;
    try {
      styles = await this.#styles(job);
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      await this.#held.failHeld(job, { code: err.code, message: err.message }, log);
      return undefined;
    }
    await (await outputs.scratch(job.outputKey)).dispose();
    const upstream = await runs.upstreamOf(job);
    log.info({ ...jobFields(job), model: job.type, attempt: job.attempts, workerToken: worker.tokenId }, 'remote job claimed');
    return {
      id: job.id,
      model: job.type,
      request: job.request,
      attempt: job.attempts,
      lease_id: job.leaseId,
      lease_expires_at: formatMicros(job.leaseExpiresAt ?? runs.leaseEnd()),
      deadline: formatMicros(runs.deadline(job)),
      inputs: signedInputs(this.#deps.catalog, job, worker, publicUrl, clock.nowMs()),
      styles,
      // Relative to the public URL, so that its own path prefix (https://host/api/) is kept.
      upload_url: resolveUrl(`${REMOTE_PATH_PREFIX.slice(1)}/jobs/${job.id}/outputs/`, publicUrl),
      ...(upstream ? { upstream: { engine: upstream.engine, id: upstream.id, state: { ...upstream.state } } } : {}),
    };
  }

  /** The artifacts of the trained styles the request names (`styles[].id`). */
  async #styles(job: ClaimedJob): Promise<Record<string, StyleArtifact>> {
    const out: Record<string, StyleArtifact> = {};
    const items = job.request.styles;
    if (!Array.isArray(items)) return out;
    for (const item of items) {
      const id = isPlainObject(item) ? item.id : undefined;
      if (typeof id === 'string' && !(id in out)) out[id] = await this.#deps.loadStyle(id);
    }
    return out;
  }

  async #giveBack(jobs: readonly ClaimedJob[]): Promise<void> {
    for (const job of jobs) await this.#deps.runs.handBack(job).catch(() => undefined);
  }
}
