// Room services/openai/: OpenAI's Videos API (POST/GET/DELETE /v1/videos, its content) over the
// native video jobs: a create is the native generation use case (tokens, balance, limits, sandbox,
// webhooks, Idempotency-Key and billing as POST /generate/{path}); reads and deletes are the job
// service's and the store's. docs/openai.md says what maps to what.
import { createHash } from 'node:crypto';
import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { isUuid } from '../../lib/ids.js';
import type { Micros } from '../../lib/time.js';
import type { Catalog } from '../../models/catalog.js';
import type { OutputStore } from '../../outputs/output-store.js';
import type { JobRecord } from '../../store/job-store.js';
import type { Store } from '../../store/store.js';
import type { AssetService, StagedUpload } from '../assets/assets.js';
import type { AuthContext } from '../identity/identity.js';
import type { GenerationOptions, GenerationPolicy, GenerationService } from '../jobs/generation.js';
import type { JobService, RemovalLog } from '../jobs/jobs.js';
import { paramError, toModelBody } from './openai-fields.js';
import { placeImages } from './openai-inputs.js';
import type { OpenAiModels } from './openai-models.js';
import { firstFrame, openVideo, videoFileOf } from './openai-video-content.js';
import type { VideoContent } from './openai-video-content.js';
import { toVideoView } from './openai-video-view.js';
import type { DeletedVideoView, VideoListView, VideoView, VideoViewContext } from './openai-video-view.js';

/** OpenAI's list page: 20 by default, 100 at most (its API reference). */
export const VIDEO_LIST_DEFAULT = 20;
export const VIDEO_LIST_MAX = 100;

/** POST /v1/videos as the transport read it (JSON, or a form whose `input_reference` is a file). */
export interface VideoCreateRequest {
  readonly model?: string | undefined;
  readonly prompt?: unknown;
  readonly seconds?: unknown;
  readonly size?: unknown;
  /** An uploaded image, staged by the transport; it becomes an asset the job reads. */
  readonly inputReference?: { readonly staged: StagedUpload; readonly filename?: string | undefined } | undefined;
}

export interface VideoListQuery {
  readonly after?: string | undefined;
  readonly limit?: number | undefined;
  readonly order?: 'asc' | 'desc' | undefined;
}

export type VideoVariant = 'video' | 'thumbnail' | 'spritesheet';

export interface OpenAiVideoDeps {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly models: Pick<OpenAiModels, 'resolve' | 'namedId'>;
  readonly generation: Pick<GenerationService, 'create'>;
  readonly jobs: Pick<JobService, 'delete' | 'outputExpired'>;
  readonly assets: Pick<AssetService, 'commit'>;
  readonly outputs: Pick<OutputStore, 'open'>;
  /** Days a finished job's files are served (output_retention_days, job_retention_days); 0: forever. */
  readonly retention: VideoViewContext['retention'];
}

const videoNotFound = (id: string) => new DomainError('not_found', `No video found with id '${id.slice(0, 100)}'`, { fields: { param: 'video_id' } });

/** An optional string field of OpenAI's request; anything else names it. */
function text(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw paramError(param, `${param} must be a string`);
  return value;
}

/**
 * A key for the input_reference's asset made from the request's Idempotency-Key: keys are one
 * namespace per workspace across endpoints, so the asset needs its own, and the same one on a
 * retry (the same asset, so the same job body, so the job's replay).
 */
const assetKeyOf = (key: string) => `openai-videos-input-reference:${createHash('sha256').update(key).digest('hex')}`;

export class OpenAiVideos {
  readonly #d: OpenAiVideoDeps;

  constructor(deps: OpenAiVideoDeps) {
    this.#d = deps;
  }

  /**
   * Creates the native job of the video model `model` names (or the default): OpenAI's fields
   * become the model's body by the one mapping rule (openai-fields.ts); the input_reference
   * image is stored as an asset and goes to the model's image input.
   */
  async create(caller: AuthContext, req: VideoCreateRequest, options: GenerationOptions, policy: GenerationPolicy, signal: AbortSignal): Promise<{ video: VideoView; replayed: boolean }> {
    let staged = req.inputReference?.staged;
    try {
      const model = text(req.model, 'model');
      const entry = this.#d.models.resolve(model, 'video');
      const prompt = text(req.prompt, 'prompt');
      if (prompt === undefined || prompt === '') throw paramError('prompt', 'prompt is required: the text describing the video');
      const seconds = req.seconds === undefined || req.seconds === null ? undefined : typeof req.seconds === 'number' ? req.seconds : text(req.seconds, 'seconds');
      const { body } = toModelBody(entry, { prompt, size: text(req.size, 'size'), seconds });
      if (req.inputReference) {
        // Refused before the file is kept: a model without an image input takes none.
        placeImages(entry, body, ['pending'], undefined, 'input_reference');
        staged = undefined;
        const key = options.idempotencyKey;
        const { asset } = await this.#d.assets.commit(
          caller,
          req.inputReference.staged,
          { filename: req.inputReference.filename, ...(key ? { idempotencyKey: assetKeyOf(key) } : {}) },
          policy.publicUrl,
          signal,
        );
        placeImages(entry, body, [asset.image_url], undefined, 'input_reference');
      }
      const created = await this.#d.generation.create({ model: entry.path, body, caller, options }, policy);
      // An alias is kept as sent, so the video reads back by it (OpenAI's object shows the id the
      // client used) after the alias leaves the config too. A replay shows what the first create kept.
      const named = this.#d.models.namedId(model, 'video');
      const alias = named !== undefined && named !== entry.path ? named : undefined;
      if (!created.replayed && alias !== undefined) await this.#d.store.openaiVideos.recordModel(created.job.job_id, alias);
      // As created (a worker may have claimed it since): pending, so queued, at 0 %.
      const job = await this.#videoJob(caller, created.job.job_id);
      const modelId = created.replayed ? (await this.#d.store.openaiVideos.modelsOf([job.id])).get(job.id) : alias;
      return { video: this.#view({ ...job, status: created.job.status, completedAt: null, progress: null, error: null }, modelId), replayed: created.replayed };
    } finally {
      await staged?.discard().catch(() => undefined);
    }
  }

  async get(caller: AuthContext, id: string): Promise<VideoView> {
    const job = await this.#videoJob(caller, id);
    return this.#view(job, (await this.#d.store.openaiVideos.modelsOf([job.id])).get(job.id));
  }

  /**
   * A page of the caller's video jobs, newest first or (`order=asc`) oldest first, after the video
   * `after` (the previous page's `last_id`). Creation times per API user are strictly increasing
   * (design.md), so a page never skips or repeats one.
   */
  async list(caller: AuthContext, q: VideoListQuery): Promise<VideoListView> {
    const limit = q.limit ?? VIDEO_LIST_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > VIDEO_LIST_MAX) throw paramError('limit', `limit must be a whole number from 1 to ${VIDEO_LIST_MAX}`);
    const order = q.order ?? 'desc';
    let from: Micros | undefined;
    let before: Micros | undefined;
    if (q.after !== undefined) {
      const after = await this.#videoJob(caller, q.after).catch((err: unknown) => {
        throw err instanceof DomainError && err.code === 'not_found' ? paramError('after', `after '${q.after!.slice(0, 100)}' is none of your videos; pass the last_id of a page`) : err;
      });
      if (order === 'asc') from = after.createdAt + 1;
      else before = after.createdAt;
    }
    const types = this.#d.catalog.entries.filter((e) => e.kind === 'video').map((e) => e.path);
    const rows = await this.#d.store.jobs.listJobs({ apiUserId: caller.apiUserId, types, from, before, order, limit: limit + 1 });
    const page = rows.slice(0, limit);
    // The video object shows the request and progress, which a list row does not carry.
    const jobs = await Promise.all(page.map((r) => this.#d.store.jobs.getJob(caller.apiUserId, r.id)));
    const named = await this.#d.store.openaiVideos.modelsOf(page.map((r) => r.id));
    const data = jobs.filter((j): j is JobRecord => j !== undefined).map((j) => this.#view(j, named.get(j.id)));
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
  }

  /** Deletes the video job as DELETE /jobs/{id} does: a running one is cancelled first, its hold released. */
  async delete(caller: AuthContext, id: string, log?: RemovalLog): Promise<DeletedVideoView> {
    const job = await this.#videoJob(caller, id);
    await this.#d.jobs.delete(caller, job.id, log);
    return { id: job.id, object: 'video.deleted', deleted: true };
  }

  /** The completed video's file, or its first frame as a WebP thumbnail. */
  async content(caller: AuthContext, id: string, variant: VideoVariant, signal: AbortSignal): Promise<VideoContent> {
    if (variant === 'spritesheet') throw paramError('variant', 'variant spritesheet is not offered by this server; ask for video or thumbnail');
    const job = await this.#videoJob(caller, id);
    if (job.status !== 'completed') {
      throw invalid(`video '${job.id}' is ${this.#view(job).status}; its content can be downloaded once it has completed`);
    }
    const name = videoFileOf(job.result);
    if (job.outputKey === null || name === undefined) throw new DomainError('not_found', `video '${job.id}' has no video file`);
    if (await this.#d.jobs.outputExpired(job.outputKey)) {
      throw new DomainError('output_expired', `video '${job.id}' expired: its files were removed under the retention settings`);
    }
    const content = variant === 'thumbnail' ? await firstFrame(this.#d.outputs, job.outputKey, name, signal) : await openVideo(this.#d.outputs, job.outputKey, name);
    if (!content) throw new DomainError('not_found', `video '${job.id}' has no video file any more`);
    return content;
  }

  /** The caller's job of a video model; any other id (an image job's too) is not found. */
  async #videoJob(caller: AuthContext, id: string): Promise<JobRecord> {
    const job = isUuid(id) ? await this.#d.store.jobs.getJob(caller.apiUserId, id.toLowerCase()) : undefined;
    if (!job || this.#d.catalog.get(job.type)?.kind !== 'video') throw videoNotFound(id);
    return job;
  }

  /** `modelId`: the id the create named, when it was not the path. */
  #view(job: JobRecord, modelId?: string): VideoView {
    return toVideoView(job, { model: this.#d.catalog.get(job.type), modelId, retention: this.#d.retention });
  }
}
