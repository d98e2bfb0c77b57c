import { DomainError, invalid } from '../../domain/error-catalogue.js';
import type { JobStatus } from '../../domain/states.js';
import type { EngineStage } from '../../engines/engine.js';
import { MAX_STYLE_ARTIFACT_BYTES } from '../../engines/engine.js';
import type { Log } from '../../lib/log.js';
import { formatMicros } from '../../lib/time.js';
import { contentTypeOf } from '../../outputs/output-store.js';
import { bodyValidator } from '../../models/validation.js';
import type { BodyValidator } from '../../models/validation.js';
import type { ClaimedJob } from '../jobs/job-runs.js';
import { resultUrls } from '../common/result-urls.js';
import type { ResultFile } from '../common/result-urls.js';
import { HeldJobs, jobFields, mustStop } from './remote-jobs.js';
import type { RemoteDeps } from './remote-jobs.js';
import { CompleteRequest, FailRequest, MAX_UPSTREAM_STATE_BYTES, ProgressRequest, WORKER_STAGES } from './remote-views.js';
import type { CompleteRequestBody, FailRequestBody, ProgressAnswerView, ProgressRequestBody } from './remote-views.js';
import type { WorkerPrincipal } from './remote-tokens.js';

const validateProgress: BodyValidator = bodyValidator(ProgressRequest);
const validateComplete: BodyValidator = bodyValidator(CompleteRequest);
const validateFail: BodyValidator = bodyValidator(FailRequest);

/** Where each status stands in a run; a report may only move forward along it. */
const ORDER: readonly JobStatus[] = ['scheduled', ...WORKER_STAGES];

/**
 * A remote worker's reports on a job it holds (docs/workers.md): progress (the heartbeat),
 * completion and failure. Each is the in-process run's move through JobRuns under the worker's
 * lease, so a worker that lost the job (cancelled, deleted, reaped, timed out) changes nothing and
 * is told why (409 with `reason`).
 */
export class RemoteRuns {
  readonly #deps: RemoteDeps;
  readonly #held: HeldJobs;

  constructor(deps: RemoteDeps) {
    this.#deps = deps;
    this.#held = new HeldJobs(deps);
  }

  /** Renews the lease, stores the fraction done and moves the status forward to the stage reported. */
  async progress(worker: WorkerPrincipal, jobId: string, body: unknown, log: Log = this.#deps.log): Promise<ProgressAnswerView> {
    validateProgress(body);
    const req = body as ProgressRequestBody;
    const job = await this.#held.held(worker, jobId, req.lease_id, log);
    if (req.preview !== undefined && req.status !== 'intermediate-complete') throw invalid('preview is sent only with status intermediate-complete');
    let status = job.status;
    if (req.status !== undefined && req.status !== status) {
      if (ORDER.indexOf(req.status) < ORDER.indexOf(status)) {
        throw new DomainError('worker_conflict', `the job is ${status} already; a status cannot go back to ${req.status}`);
      }
      status = await this.#advance(job, req.status, req.preview);
    } else if (req.preview !== undefined && status === 'intermediate-complete') {
      throw invalid('the job shows a preview already; send the next one with the final outputs');
    }
    if (req.upstream !== undefined) {
      if (Buffer.byteLength(JSON.stringify(req.upstream.state)) > MAX_UPSTREAM_STATE_BYTES) throw invalid(`upstream.state is larger than ${MAX_UPSTREAM_STATE_BYTES} bytes of JSON`);
      const { engine, id, state } = req.upstream;
      const saved = await this.#deps.runs.saveUpstream(job, { engine, id, state });
      if (saved.kind === 'lost') throw mustStop(saved.why);
    }
    const beat = await this.#deps.runs.heartbeat(job, req.fraction);
    if (beat.kind === 'lost') throw mustStop(beat.why);
    return { lease_expires_at: formatMicros(this.#deps.runs.leaseEnd()), status: status as ProgressAnswerView['status'] };
  }

  /**
   * Each stage from the job's status up to `to`, in turn; the last with the preview (already
   * uploaded) in the result. A move refused while the worker still holds the job means another of
   * its calls moved the job meanwhile: it goes on from the status the job has now, and a job
   * already at or past `to` is done. Returns the status reached.
   */
  async #advance(job: ClaimedJob, to: EngineStage, preview: string | undefined): Promise<JobStatus> {
    const patch = preview === undefined ? undefined : { result: { urls: resultUrls([{ name: await this.#uploaded(job, preview) }], (n) => this.#deps.outputs.url(job.outputKey, n)) } };
    let status = job.status;
    for (let refused = 0; ORDER.indexOf(status) < ORDER.indexOf(to); ) {
      const stage = WORKER_STAGES[ORDER.indexOf(status)]!;
      const moved = await this.#deps.runs.advance(job, status, stage, stage === to ? patch : undefined);
      if (moved.kind === 'lost') throw mustStop(moved.why);
      // Stale: at most a few calls of one worker race; past that, something else is wrong.
      if (moved.kind === 'stale' && ++refused > 3) throw mustStop('lease_lost');
      status = moved.job.status;
    }
    return status;
  }

  /**
   * Completes the job with the uploaded files as its result (the same URL shapes as an in-process
   * run's) and, for a training job, the style. Billed by JobRuns.complete: once, by the main
   * output's `duration_us` for a metered model.
   */
  async complete(worker: WorkerPrincipal, jobId: string, body: unknown, log: Log = this.#deps.log): Promise<{ status: 'completed' }> {
    validateComplete(body);
    const req = body as CompleteRequestBody;
    const job = await this.#held.held(worker, jobId, req.lease_id, log);
    const { runs, outputs } = this.#deps;
    const style = checkedStyle(req.style, runs.makesStyle(job.type), job.type);
    const names = new Set<string>();
    const files: ResultFile[] = [];
    for (const [i, o] of req.outputs.entries()) {
      if (names.has(o.name)) throw invalid(`outputs[${i}].name: '${o.name}' is listed twice`);
      names.add(o.name);
      await this.#uploaded(job, o.name, `outputs[${i}].name`);
      files.push({ name: o.name, ...(o.role ? { role: o.role } : {}), ...(o.key ? { key: o.key } : {}) });
    }
    const allowed = runs.mainOutputTypes(job.type);
    const mainType = contentTypeOf(req.outputs[0]!.name);
    if (allowed && !allowed.includes(mainType)) {
      throw invalid(`outputs[0].name: '${req.outputs[0]!.name}' is ${mainType}, but the main output of ${job.type} is one of ${allowed.join(', ')}; list the main output first`);
    }
    const keys = files.filter((f) => f.key !== undefined).length;
    if (keys > 0 && keys < files.length) throw invalid('outputs: give every output a key, or none');
    const measured = req.outputs[0]!.duration_us;
    const usage = measured === undefined ? undefined : { outputUs: measured };
    const urls = resultUrls(files, (n) => outputs.url(job.outputKey, n));
    let ended = await runs.complete(job, await this.#toSampling(job), { urls }, usage, style);
    // Stale: another call of the worker moved the job meanwhile; once more from where it is.
    if (ended.kind === 'stale') ended = await runs.complete(job, await this.#toSampling({ ...job, status: ended.job.status }), { urls }, usage, style);
    if (ended.kind !== 'ended') throw mustStop(ended.kind === 'lost' ? ended.why : 'lease_lost');
    log.info({ ...jobFields(job), model: job.type, attempt: job.attempts }, 'remote job completed');
    await this.#dropUnlisted(job, names, log);
    return { status: 'completed' };
  }

  /** Fails the job, or hands it back for another attempt when the worker says one may succeed. */
  async fail(worker: WorkerPrincipal, jobId: string, body: unknown, log: Log = this.#deps.log): Promise<{ status: 'failed' | 'queued' }> {
    validateFail(body);
    const req = body as FailRequestBody;
    const job = await this.#held.held(worker, jobId, req.lease_id, log);
    const error = { code: req.code, message: req.message.trim() || req.code };
    if (req.retryable !== true) {
      if (!(await this.#held.failHeld(job, error, log))) throw await this.#held.lost(job.id);
      return { status: 'failed' };
    }
    const outcome = await this.#deps.runs.retryOrFail(job, error);
    if (outcome.kind === 'lost') throw mustStop(outcome.why);
    const status = outcome.kind === 'requeued' ? 'queued' : 'failed';
    log.info({ ...jobFields(job), model: job.type, attempt: job.attempts, code: error.code, outcome: status }, 'remote job failed, retryable');
    // Requeued, its next claim starts the key clean; failed, its files are never served again.
    if (outcome.kind === 'ended' && outcome.outputsGo) await this.#deps.outputs.remove(job.outputKey).catch(() => undefined);
    return { status };
  }

  /** Complete moves from `sampling` on: a worker that reported fewer stages is moved along first. */
  async #toSampling(job: ClaimedJob): Promise<JobStatus> {
    if (job.status === 'sampling' || job.status === 'intermediate-complete') return job.status;
    return this.#advance(job, 'sampling', undefined);
  }

  /** Refuses (400) a file name that was not uploaded for this job. */
  async #uploaded(job: ClaimedJob, name: string, field = 'preview'): Promise<string> {
    if (!(await this.#deps.outputs.stat(job.outputKey, name))) throw invalid(`${field}: '${name}' was not uploaded; PUT it to the job's upload_url first`);
    return name;
  }

  /**
   * What the job's key holds beyond its outputs (a preview not among them, retries under other
   * names, scratch renders) is removed: a completed job serves exactly its result.
   */
  async #dropUnlisted(job: ClaimedJob, kept: ReadonlySet<string>, log: Log): Promise<void> {
    const { outputs } = this.#deps;
    try {
      for (const name of await outputs.names(job.outputKey)) if (!kept.has(name)) await outputs.removeFile(job.outputKey, name);
    } catch (err) {
      log.warn({ ...jobFields(job), err: String(err) }, "could not remove a completed remote job's unlisted files");
    }
  }
}

/** The style a completion carries: exactly for models that train one, a JSON object of bounded size. */
function checkedStyle(style: Readonly<Record<string, unknown>> | undefined, makesStyle: boolean, model: string): Readonly<Record<string, unknown>> | undefined {
  if (!makesStyle) {
    if (style !== undefined) throw invalid(`style: ${model} trains no style; send style only for a training job`);
    return undefined;
  }
  if (style === undefined) throw invalid(`style: ${model} trains a style; send its artifact as style`);
  const size = Buffer.byteLength(JSON.stringify(style));
  if (size > MAX_STYLE_ARTIFACT_BYTES) throw invalid(`style: the artifact is ${size} bytes of JSON, more than the ${MAX_STYLE_ARTIFACT_BYTES} a style may be`);
  return style;
}
