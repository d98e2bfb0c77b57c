// Room services/openai/: OpenAI's Videos API over the native jobs (docs/openai.md). This module is
// the video object: a native video job as OpenAI's `Video` (openai-node src/resources/videos.ts).
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import type { JobStatus } from '../../domain/states.js';
import type { ModelModule } from '../../models/model.js';
import type { JobRecord } from '../../store/job-store.js';

const VIDEO_ID = '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69';

/** OpenAI's four statuses; the native nine fold into them (videoStatusOf). */
export const VIDEO_STATUSES = ['queued', 'in_progress', 'completed', 'failed'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

const UnixSeconds = (description: string) => Type.Integer({ minimum: 0, description, examples: [1_795_435_200] });
const OrNull = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, description: string, example: unknown) =>
  Type.Union([t, Type.Null()], { description, examples: [example] });

const VIDEO_EXAMPLE = {
  id: VIDEO_ID,
  object: 'video',
  model: 'video/vendor-d/model-d-fast',
  status: 'completed',
  progress: 100,
  created_at: 1_795_435_200,
  completed_at: 1_795_435_214,
  expires_at: 1_798_027_214,
  prompt: 'A red fox trotting through fresh snow',
  remixed_from_video_id: null,
  seconds: '4',
  size: '1280x720',
  error: null,
};

const VideoError = Type.Object(
  {
    code: Type.String({ description: "The native job's error code (docs/errors.md); `cancelled` for a cancelled job", examples: ['engine_failed'] }),
    message: Type.String({ description: 'The same, in words', examples: ['the engine could not render the request'] }),
  },
  { description: 'Why the job failed', examples: [{ code: 'engine_failed', message: 'the engine could not render the request' }] },
);

export const OpenAiVideo = Type.Object(
  {
    id: Type.String({ description: "The video's id: the native job's id (GET /jobs/{id} shows the same job)", examples: [VIDEO_ID] }),
    object: Type.Literal('video', { description: 'Always `video`', examples: ['video'] }),
    model: Type.String({ description: 'The model id the create named (a catalog path, or an alias of the config kept as sent); the path for a video made natively', examples: [VIDEO_EXAMPLE.model] }),
    status: Type.Union(
      VIDEO_STATUSES.map((s) => Type.Literal(s)),
      { description: 'queued (backlogged or queued), in_progress (a worker holds it), completed, or failed (failed or cancelled)', examples: ['in_progress'] },
    ),
    progress: Type.Integer({ minimum: 0, maximum: 100, description: "Percent done: 0 while queued, a worker's last report while in progress, 100 once completed", examples: [40] }),
    created_at: UnixSeconds('When the job was created (Unix seconds)'),
    completed_at: OrNull(Type.Integer({ minimum: 0 }), 'When the job ended (Unix seconds); null until then', VIDEO_EXAMPLE.completed_at),
    expires_at: OrNull(
      Type.Integer({ minimum: 0 }),
      "When a completed video's files stop being served under the retention settings (Unix seconds); null before it completed or when kept forever",
      VIDEO_EXAMPLE.expires_at,
    ),
    prompt: OrNull(Type.String(), 'The prompt the job was created with', VIDEO_EXAMPLE.prompt),
    remixed_from_video_id: Type.Null({ description: 'Always null: remixes are not offered', examples: [null] }),
    seconds: Type.String({ description: "The clip's length in seconds as the model makes it for the job (its duration field, or its default); empty when the model does not say (an edit's input decides)", examples: ['4'] }),
    size: Type.String({ description: "WxH of the frames the model makes for the job (its size fields or its defaults, docs/openai.md); empty when the model does not say", examples: ['1280x720'] }),
    error: OrNull(VideoError, 'Why the job failed; null unless it failed or was cancelled', { code: 'engine_failed', message: 'the engine could not render the request' }),
  },
  { $id: 'OpenAiVideo', description: "A video job in OpenAI's shape (the Videos API's `Video`) over a native video job", examples: [VIDEO_EXAMPLE] },
);

export type VideoView = Static<typeof OpenAiVideo>;

export const OpenAiVideoList = Type.Object(
  {
    object: Type.Literal('list', { description: 'Always `list`', examples: ['list'] }),
    data: Type.Array(OpenAiVideo, { description: 'The videos of the page, in the order asked' }),
    first_id: OrNull(Type.String(), 'The first video of the page; null on an empty page', VIDEO_ID),
    last_id: OrNull(Type.String(), 'The last video of the page: pass it as `after` for the next page; null on an empty page', VIDEO_ID),
    has_more: Type.Boolean({ description: 'Whether a page follows', examples: [false] }),
  },
  { $id: 'OpenAiVideoList', description: "A page of video jobs in OpenAI's list shape", examples: [{ object: 'list', data: [VIDEO_EXAMPLE], first_id: VIDEO_ID, last_id: VIDEO_ID, has_more: false }] },
);

export type VideoListView = Static<typeof OpenAiVideoList>;

export const DeletedOpenAiVideo = Type.Object(
  {
    id: Type.String({ description: 'The deleted video', examples: [VIDEO_ID] }),
    object: Type.Literal('video.deleted', { description: 'Always `video.deleted`', examples: ['video.deleted'] }),
    deleted: Type.Literal(true, { description: 'Always true', examples: [true] }),
  },
  { $id: 'DeletedOpenAiVideo', description: 'The video job and its files are gone (a running one was cancelled first, as DELETE /jobs/{id} does)', examples: [{ id: VIDEO_ID, object: 'video.deleted', deleted: true }] },
);

export type DeletedVideoView = Static<typeof DeletedOpenAiVideo>;

export function videoStatusOf(status: JobStatus): VideoStatus {
  switch (status) {
    case 'backlogged':
    case 'queued':
      return 'queued';
    case 'completed':
      return 'completed';
    case 'failed':
    case 'cancelled':
      return 'failed';
    default:
      return 'in_progress';
  }
}

/** What the view reads of a job beside its record: its model, the id the create named, the retention settings. */
export interface VideoViewContext {
  /** The catalog's model of the job (its request schema, its shape); undefined when the catalog no longer has it. */
  readonly model: Pick<ModelModule, 'request' | 'videoShape'> | undefined;
  /** The model id the create named when it was not the path (an alias, kept as sent); absent: the job's path. */
  readonly modelId?: string | undefined;
  /** Days a finished job's files stay served (output_retention_days, job_retention_days); 0 keeps forever. */
  readonly retention: { readonly outputDays: number; readonly jobDays: number };
}

const DURATION_FIELDS = ['duration', 'seconds', 'duration_seconds'];
const SECONDS_PER_DAY = 86_400;
const toSeconds = (micros: number) => Math.floor(micros / 1_000_000);

type Props = Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>>;

/** The value the job asks for in `field`, else the schema's default for it. */
function asked(request: Readonly<Record<string, unknown>>, props: Props, field: string): unknown {
  return request[field] ?? props[field]?.default;
}

/** `seconds`: the duration field the job has (or the model's default for it); '' when the model has none. */
function secondsOf(request: Readonly<Record<string, unknown>>, props: Props): string {
  for (const field of DURATION_FIELDS) {
    const value = asked(request, props, field);
    if (typeof value === 'number' || typeof value === 'string') return String(value);
  }
  return '';
}

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

/**
 * `size`: width and height where the model has them; else its aspect ratio at its resolution tier,
 * `720p` being the short side (1280x720 at 16:9, as OpenAI's sizes read), `1K` the long side; ''
 * when the model says neither.
 */
function sizeOf(request: Readonly<Record<string, unknown>>, props: Props): string {
  const width = asked(request, props, 'width');
  const height = asked(request, props, 'height');
  if (typeof width === 'number' && typeof height === 'number') return `${width}x${height}`;
  const ratio = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(String(asked(request, props, 'aspect_ratio') ?? asked(request, props, 'ratio') ?? ''));
  if (!ratio) return '';
  const [w, h] = [Number(ratio[1]), Number(ratio[2])];
  // A ratio written as pixels (`1280:720`) is the size itself.
  if (w >= 64 && h >= 64 && Number.isInteger(w) && Number.isInteger(h)) return `${w}x${h}`;
  const tier = /^(\d+(?:\.\d+)?)([kKpP])$/.exec(String(asked(request, props, 'resolution') ?? '720p'));
  if (!tier) return '';
  const edge = tier[2]!.toLowerCase() === 'k' ? Number(tier[1]) * 1024 : Number(tier[1]);
  const shortSide = tier[2]!.toLowerCase() === 'k' ? edge * (Math.min(w, h) / Math.max(w, h)) : edge;
  const longSide = tier[2]!.toLowerCase() === 'k' ? edge : edge * (Math.max(w, h) / Math.min(w, h));
  return w >= h ? `${even(longSide)}x${even(shortSide)}` : `${even(shortSide)}x${even(longSide)}`;
}

/** The first of the retention lifetimes that ends a finished job's files; null when both keep them forever. */
function expiresAt(completedAt: number | null, retention: VideoViewContext['retention']): number | null {
  const days = [retention.outputDays, retention.jobDays].filter((d) => d > 0);
  if (completedAt === null || days.length === 0) return null;
  return toSeconds(completedAt) + Math.min(...days) * SECONDS_PER_DAY;
}

function progressOf(job: Pick<JobRecord, 'status' | 'progress'>, status: VideoStatus): number {
  if (status === 'completed') return 100;
  if (status === 'queued' || job.progress === null) return 0;
  // A run that reported 100 % has not completed until the job has.
  return Math.min(99, Math.max(0, Math.round(job.progress * 100)));
}

function errorOf(job: Pick<JobRecord, 'status' | 'error'>): VideoView['error'] {
  if (job.status === 'cancelled') return { code: 'cancelled', message: job.error?.message ?? 'the job was cancelled' };
  if (job.status !== 'failed') return null;
  return { code: job.error?.code ?? 'engine_failed', message: job.error?.message ?? 'the job failed' };
}

/** A native video job as OpenAI's video object. */
export function toVideoView(
  job: Pick<JobRecord, 'id' | 'type' | 'status' | 'createdAt' | 'completedAt' | 'request' | 'error' | 'progress'>,
  ctx: VideoViewContext,
): VideoView {
  const status = videoStatusOf(job.status);
  const props = (ctx.model?.request?.properties ?? {}) as Props;
  // The model's own shape where it has one: what it renders, which its fields alone may not say.
  const shape = ctx.model?.videoShape?.(job.request);
  return {
    id: job.id,
    object: 'video',
    model: ctx.modelId ?? job.type,
    status,
    progress: progressOf(job, status),
    created_at: toSeconds(job.createdAt),
    completed_at: job.completedAt === null ? null : toSeconds(job.completedAt),
    expires_at: job.status === 'completed' ? expiresAt(job.completedAt, ctx.retention) : null,
    prompt: typeof job.request.prompt === 'string' ? job.request.prompt : null,
    remixed_from_video_id: null,
    seconds: shape ? String(shape.seconds) : secondsOf(job.request, props),
    size: shape ? `${shape.width}x${shape.height}` : sizeOf(job.request, props),
    error: errorOf(job),
  };
}
