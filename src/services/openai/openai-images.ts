import sharp from 'sharp';
import type { Readable } from 'node:stream';
import { DomainError } from '../../domain/error-catalogue.js';
import type { Clock } from '../../lib/clock.js';
import { storedUrlAt } from '../../lib/urls.js';
import type { CatalogEntry } from '../../models/catalog.js';
import { OUTPUTS_PATH, isOutputKey, isOutputName } from '../../outputs/output-store.js';
import type { OutputStore } from '../../outputs/output-store.js';
import type { AuthContext } from '../identity/identity.js';
import type { CreatedJob, GenerationOptions, GenerationPolicy, GenerationService } from '../jobs/generation.js';
import type { JobService } from '../jobs/jobs.js';
import type { JobWaits } from '../jobs/job-waits.js';
import type { JobView } from '../common/job-view.js';
import { toModelBody } from './openai-fields.js';
import type { ImageRequest } from './openai-image-request.js';
import { placeImages } from './openai-inputs.js';
import type { OpenAiModels } from './openai-models.js';
import { JobOutcomeError } from './openai-outcome.js';

/** One image of OpenAI's answer. */
export type OpenAiImage = { readonly url: string } | { readonly b64_json: string };

/** OpenAI's ImagesResponse, as this server fills it (no token `usage`: nothing here counts tokens). */
export interface OpenAiImagesResponse {
  readonly created: number;
  readonly data: readonly OpenAiImage[];
  readonly output_format?: 'png' | 'jpeg' | 'webp';
  readonly size?: string;
}

export interface ImagesAnswer {
  readonly response: OpenAiImagesResponse;
  /** The model that ran: its deprecation (if any) goes out as headers, as on the native route. */
  readonly entry: CatalogEntry;
  /** Every job came from an earlier request with the same Idempotency-Key. */
  readonly replayed: boolean;
}

/** Uploaded images of an edit, already assets of the caller's workspace (never a caller's URL). */
export interface EditImages {
  readonly imageUrls: readonly string[];
  readonly maskUrl?: string;
}

/** A b64_json answer carries whole files; past this an image is refused rather than buffered. */
const MAX_B64_BYTES = 64 * 1024 * 1024;
/** Between two looks at a job while this process already holds its maximum of waits. */
const BUSY_POLL_MS = 1000;
const FORMATS: Readonly<Record<string, 'png' | 'jpeg' | 'webp'>> = { png: 'png', jpeg: 'jpeg', webp: 'webp' };

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > MAX_B64_BYTES) {
      stream.destroy();
      throw new DomainError('internal', 'an output image is too large to answer as b64_json; ask for response_format url');
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * POST /v1/images/generations and /v1/images/edits: OpenAI's synchronous answer over native jobs.
 * The request is mapped onto the model's own body by the one rule (openai-fields.ts) and created
 * through the generation use case, exactly as POST /generate/{model} creates it (tokens, balance,
 * limits, webhooks, Idempotency-Key, sandbox markers, billing); then the jobs are waited for.
 */
export class OpenAiImages {
  readonly #models: OpenAiModels;
  readonly #generation: GenerationService;
  readonly #jobs: JobService;
  readonly #waits: JobWaits;
  readonly #outputs: OutputStore;
  readonly #clock: Clock;

  constructor(deps: { models: OpenAiModels; generation: GenerationService; jobs: JobService; waits: JobWaits; outputs: OutputStore; clock: Clock }) {
    this.#models = deps.models;
    this.#generation = deps.generation;
    this.#jobs = deps.jobs;
    this.#waits = deps.waits;
    this.#outputs = deps.outputs;
    this.#clock = deps.clock;
  }

  /** The model a request names, before its files are read: an edit's uploads wait until the model is known. */
  model(req: Pick<ImageRequest, 'model'>): CatalogEntry {
    return this.#models.resolve(req.model, 'image');
  }

  async create(caller: AuthContext, req: ImageRequest, options: GenerationOptions, policy: GenerationPolicy, signal: AbortSignal, edit?: EditImages): Promise<ImagesAnswer> {
    const entry = this.model(req);
    const mapped = toModelBody(entry, req.fields);
    if (edit) placeImages(entry, mapped.body, edit.imageUrls, edit.maskUrl);
    const created = await this.#admit(caller, entry, mapped.body, mapped.jobs, options, policy);
    const ids = created.map((c) => c.job.job_id);
    const ended = await this.#waitAll(caller, ids, signal);
    const data: OpenAiImage[] = [];
    let format: OpenAiImagesResponse['output_format'];
    let size: string | undefined;
    for (const job of ended) {
      for (const path of outputPaths(job)) {
        const file = await this.#read(path);
        const meta = await sharp(file, { limitInputPixels: false }).metadata().catch(() => undefined);
        format ??= FORMATS[meta?.format ?? ''];
        if (size === undefined && meta?.width && meta.height) size = `${meta.width}x${meta.height}`;
        data.push(req.responseFormat === 'b64_json' ? { b64_json: file.toString('base64') } : { url: storedUrlAt(path, policy.publicUrl) });
      }
    }
    return {
      response: { created: Math.floor(this.#clock.nowMs() / 1000), data, ...(format ? { output_format: format } : {}), ...(size ? { size } : {}) },
      entry,
      replayed: created.every((c) => c.replayed),
    };
  }

  /**
   * `count` native jobs of one body. Each job past the first gets its own Idempotency-Key
   * (`<key>#2`...), so a retry replays every one. When one is refused (balance, limits), the ones
   * this request made are cancelled (their holds released) and the refusal answers.
   */
  async #admit(caller: AuthContext, entry: CatalogEntry, body: Record<string, unknown>, count: number, options: GenerationOptions, policy: GenerationPolicy): Promise<CreatedJob[]> {
    const created: CreatedJob[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const key = options.idempotencyKey === null || i === 0 ? options.idempotencyKey : `${options.idempotencyKey}#${i + 1}`;
        if (key !== null && key.length > 255) throw new DomainError('invalid_request', 'Idempotency-Key is too long for several images: keep it within 250 characters', { fields: { param: 'n' } });
        created.push(await this.#generation.create({ model: entry.path, body, caller, options: { ...options, idempotencyKey: key } }, policy));
      }
    } catch (err) {
      for (const c of created) if (!c.replayed) await this.#jobs.cancel(caller, c.job.job_id).catch(() => undefined);
      throw err;
    }
    return created;
  }

  /** Waits for every job to end within the configured limit; any that ends badly, or not at all, answers the request. */
  async #waitAll(caller: AuthContext, ids: readonly string[], signal: AbortSignal): Promise<JobView[]> {
    const deadline = this.#clock.nowMs() + this.#models.waitSeconds * 1000;
    const ended: JobView[] = [];
    for (const id of ids) {
      let job: JobView;
      for (;;) {
        const left = Math.max(0, deadline - this.#clock.nowMs());
        const waited = await this.#waits.waitForEnd(caller, id, left, signal);
        job = waited.job;
        if (isEnded(job) || left === 0 || signal.aborted) break;
        // This process holds its maximum of waits: look again shortly, within the deadline.
        if (!waited.applied) await this.#clock.sleep(Math.min(BUSY_POLL_MS, left), signal).catch(() => undefined);
      }
      if (job.status === 'failed') {
        throw new JobOutcomeError('failed', job.error?.code ?? 'failed', `job ${id} failed: ${job.error?.message ?? job.error?.code ?? 'no reason given'}`, ids);
      }
      if (job.status === 'cancelled') throw new JobOutcomeError('cancelled', 'cancelled', `job ${id} was cancelled before it completed`, ids);
      if (job.status !== 'completed') {
        throw new JobOutcomeError('timeout', 'timeout', `the image job(s) did not complete within ${this.#models.waitSeconds} s; they go on as native jobs: ${ids.join(', ')} (GET /jobs/{id})`, ids);
      }
      ended.push(job);
    }
    return ended;
  }

  async #read(path: string): Promise<Buffer> {
    const [key, name] = path.split('/').slice(-2) as [string, string];
    const file = await this.#outputs.open(key, name);
    if (!file) throw new DomainError('internal', 'an output of the job is no longer stored');
    if (file.size > MAX_B64_BYTES) {
      await file.close();
      throw new DomainError('internal', 'an output image is too large to answer; ask for response_format url');
    }
    return readAll(file.stream());
  }
}

const isEnded = (job: JobView) => job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled';

/** The stored output paths (`/outputs/<key>/<name>`) of a completed job, in order. */
function outputPaths(job: JobView): string[] {
  const urls = job.result?.urls;
  const list = Array.isArray(urls) ? urls.map((u) => (typeof u === 'string' ? u : u.url)) : Object.values(urls ?? {});
  return list.filter((u) => {
    const parts = u.split('/');
    return u.startsWith(`${OUTPUTS_PATH}/`) && parts.length === 4 && isOutputKey(parts[2]!) && isOutputName(parts[3]!);
  });
}
