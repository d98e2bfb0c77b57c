import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { formatMicros, formatMicrosOrNull } from '../lib/time.js';
import { resolveUrl } from '../lib/urls.js';
import { StringEnum } from '../models/schema-kit.js';
import { JOB_STATUSES } from '../domain/states.js';
import type { JobSummary } from '../store/store.js';

/**
 * A job as the API shows it (spec 2.1), declared once: the routes' response schema, the webhook
 * payload and the services' return type (`JobView`) are this schema. `$id` is its OpenAPI
 * component name. Below http because the services build it.
 */
const EXAMPLE_URL = 'https://mediagen.example/outputs/0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69/image-1.png';

const UrlList = Type.Union(
  [
    Type.Array(Type.String({ format: 'uri' }), { description: 'Output URLs (what the local engines produce)' }),
    Type.Array(
      Type.Object(
        {
          type: StringEnum(['model', 'preview'], { description: 'A 3D model or its preview image' }),
          url: Type.String({ format: 'uri', description: 'Where the output is' }),
        },
        { additionalProperties: false },
      ),
    ),
    Type.Record(Type.String(), Type.String({ format: 'uri' }), { description: 'Output URLs by name' }),
  ],
  { description: 'Output locations, in one of three shapes (spec 2.2)', examples: [[EXAMPLE_URL]] },
);

export const JobResult = Type.Object(
  {
    urls: Type.Optional(UrlList),
    style_id: Type.Optional(Type.String({ description: 'The trained style of a completed style-training job', examples: ['style-7f3a'] })),
  },
  { $id: 'JobResult', additionalProperties: false, description: 'What a completed job produced (spec 2.2)', examples: [{ urls: [EXAMPLE_URL] }] },
);

export const JobError = Type.Object(
  {
    code: Type.String({ description: 'Why the job failed, as a stable code', examples: ['engine_failed'] }),
    message: Type.Optional(Type.String({ description: 'The same, in words', examples: ['the engine could not render the request'] })),
  },
  { $id: 'JobError', description: 'Why a job failed (spec 2.3)', examples: [{ code: 'engine_failed', message: 'the engine could not render the request' }] },
);

const JOB_EXAMPLE = {
  job_id: '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69',
  type: 'image/vendor-a/model-a-2/medium',
  status: 'completed',
  created_at: '2026-11-22T12:00:00.000000Z',
  completed_at: '2026-11-22T12:00:04.250000Z',
  result: { urls: [EXAMPLE_URL] },
};

export const Job = Type.Object(
  {
    job_id: Type.String({ format: 'uuid', description: 'The job identifier', examples: [JOB_EXAMPLE.job_id] }),
    type: Type.String({ description: 'The job type: the model path it was created at', examples: [JOB_EXAMPLE.type] }),
    status: StringEnum(JOB_STATUSES, {
      description: 'Where the job is; completed, failed and cancelled are terminal (spec 3)',
      examples: ['queued'],
    }),
    created_at: Type.String({ format: 'date-time', description: 'When the job was created (UTC, microseconds)', examples: [JOB_EXAMPLE.created_at] }),
    completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the job reached a terminal status; null until then',
      examples: [JOB_EXAMPLE.completed_at],
    }),
    result: Type.Union([JobResult, Type.Null()], { description: 'The outputs; null until the job completes', examples: [JOB_EXAMPLE.result] }),
    error: Type.Optional(JobError),
  },
  { $id: 'Job', description: 'A generation job (spec 2.1)', examples: [JOB_EXAMPLE] },
);

export type JobView = Static<typeof Job>;

export const JobPage = Type.Object(
  {
    items: Type.Array(Job, { description: 'Jobs, newest first' }),
    next_cursor: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Pass as `cursor` for the next page; null on the last page.',
      examples: ['2026-11-22T12:00:00.000000Z'],
    }),
  },
  { $id: 'JobPage', description: 'A page of jobs (spec 2.4)', examples: [{ items: [JOB_EXAMPLE], next_cursor: null }] },
);

export type JobPageView = Static<typeof JobPage>;

export function toJobView(job: JobSummary): JobView {
  return {
    job_id: job.id,
    type: job.type,
    status: job.status,
    created_at: formatMicros(job.createdAt),
    completed_at: formatMicrosOrNull(job.completedAt),
    // Written by the job runner from an engine's output, which has this shape.
    result: job.result as JobView['result'],
    ...(job.error ? { error: job.error } : {}),
  };
}

/**
 * The store keeps output URL paths (`/outputs/<key>/<name>`), not absolute URLs, so a job written
 * by a worker on another machine, or before the public URL changed, is shown at this server's
 * public URL. They resolve under it, path prefix included (https://host/api/outputs/...). The API
 * and the webhook payload both show jobs this way.
 */
export function presentJob(view: JobView, publicUrl: string): JobView {
  const urls = view.result?.urls;
  if (!Array.isArray(urls)) return view;
  const resolve = (u: string) => resolveUrl(u.replace(/^\/+/, ''), publicUrl);
  const resolved = urls.map((u) => (typeof u === 'string' ? resolve(u) : { ...u, url: resolve(u.url) }));
  return { ...view, result: { ...view.result, urls: resolved as string[] } };
}
