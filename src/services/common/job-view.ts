// Room services/common/: what several rooms share and none owns: the job view, paging, idempotency, admission counts,
// result URLs, removal of stored files, the Meter port.
// May import from services/: nothing in services/; test/unit/layers.test.ts holds the order.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { formatMicros } from '../../lib/time.js';
import { storedUrlAt } from '../../lib/urls.js';
import { StringEnum } from '../../models/schema-kit.js';
import { JOB_STATUSES } from '../../domain/states.js';
import { MAX_TAGS, TAG_PATTERN } from '../../domain/job-tags.js';
import { JOB_ERROR_CODES } from '../../engines/engine.js';
import type { JobSummary } from '../../store/store.js';
import { Cursor } from './paging.js';

/**
 * A job as the API shows it (spec 2.1), declared once: the routes' response schema, the webhook
 * payload and the services' return type (`JobView`) are this schema. `$id` is its OpenAPI
 * component name. Below http because the services build it.
 */
const EXAMPLE_URL = 'https://mediagen.example/outputs/0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69/image-1.png';

/**
 * The outputs of a job whose files are not all of one kind, each with its role: a 3D model's
 * result (spec 2.2). A component of its own, so the 3D operations can name it (http/routes/generate-routes.ts).
 */
export const ModelFileUrls = Type.Array(
  Type.Object(
    {
      type: StringEnum(['model', 'preview'], { description: 'A 3D model or its preview image' }),
      url: Type.String({ format: 'uri', description: 'Where the output is' }),
    },
    { additionalProperties: false },
  ),
  {
    $id: 'ModelFileUrls',
    description: 'Outputs with their roles: a 3D model file (binary glTF) and a preview image of it',
    examples: [
      [
        { type: 'model', url: 'https://mediagen.example/outputs/0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69/model.glb' },
        { type: 'preview', url: 'https://mediagen.example/outputs/0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69/preview.png' },
      ],
    ],
  },
);

const UrlList = Type.Union(
  [
    Type.Array(Type.String({ format: 'uri' }), { description: 'Output URLs (what the local engines produce)' }),
    ModelFileUrls,
    Type.Record(Type.String(), Type.String({ format: 'uri' }), { description: 'Output URLs by name' }),
  ],
  { description: 'Output locations, in one of three shapes (spec 2.2)', examples: [[EXAMPLE_URL]] },
);

export const JobResult = Type.Object(
  {
    urls: Type.Optional(UrlList),
    style_id: Type.Optional(Type.String({ description: 'The trained style of a completed style-training job', examples: ['style-7f3a'] })),
  },
  { $id: 'JobResult', additionalProperties: false, description: 'What a completed job produced (spec 2.2); while intermediate-complete, its preview', examples: [{ urls: [EXAMPLE_URL] }] },
);

export const JobError = Type.Object(
  {
    code: Type.String({
      // Not an enum: a client must not break on a code a newer server adds. docs/errors.md says when each is given.
      description: `Why the job failed, as a stable code: ${Object.entries(JOB_ERROR_CODES)
        .map(([code, when]) => `\`${code}\` (${when})`)
        .join('; ')}`,
      examples: ['engine_failed'],
    }),
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
    type: Type.String({ description: 'The job type: the model path it was created at, or `node-app/<slug>` for a node-app execution', examples: [JOB_EXAMPLE.type] }),
    status: StringEnum(JOB_STATUSES, {
      description: 'Where the job is; completed, failed and cancelled are terminal (spec 3)',
      examples: ['queued'],
    }),
    created_at: Type.String({ format: 'date-time', description: 'When the job was created (UTC, microseconds)', examples: [JOB_EXAMPLE.created_at] }),
    // Absent rather than null outside creation responses (spec 2.1: "optional elsewhere"), as in the
    // original API's published document, whose strict clients refuse a null here.
    completed_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the job reached a terminal status; absent until then',
        examples: [JOB_EXAMPLE.completed_at],
      }),
    ),
    result: Type.Optional(JobResult),
    error: Type.Optional(JobError),
    // Absent without tags, like every field here without a value: the spec's job has no tags.
    tags: Type.Optional(
      Type.Array(Type.String({ pattern: TAG_PATTERN }), {
        maxItems: MAX_TAGS,
        description: 'The tags its creator gave it (`X-Mediagen-Tags`), without duplicates, in code point order; absent when it has none (docs/routing.md "Tags")',
        examples: [['campaign-7', 'team-a']],
      }),
    ),
  },
  {
    $id: 'Job',
    description:
      'A generation job (spec 2.1). `completed_at` and `result` are absent while they have no value: `result` appears with ' +
      'the outputs (or, while intermediate-complete, the preview); `completed_at` at the terminal status.',
    examples: [JOB_EXAMPLE],
  },
);

export type JobView = Static<typeof Job>;

export const JobPage = Type.Object(
  {
    items: Type.Array(Job, { description: 'Jobs, newest first' }),
    next_cursor: Cursor('job creation time'),
  },
  { $id: 'JobPage', description: 'A page of jobs (spec 2.4)', examples: [{ items: [JOB_EXAMPLE], next_cursor: null }] },
);

export type JobPageView = Static<typeof JobPage>;

/** A job as GET /jobs/{id}, GET /jobs and the webhook payload show it: what has no value is absent. */
export function toJobView(job: JobSummary): JobView {
  return {
    job_id: job.id,
    type: job.type,
    status: job.status,
    created_at: formatMicros(job.createdAt),
    ...(job.completedAt === null ? {} : { completed_at: formatMicros(job.completedAt) }),
    // Written by the job runner from an engine's output, which has this shape.
    ...(job.result === null ? {} : { result: job.result as NonNullable<JobView['result']> }),
    ...(job.error ? { error: job.error } : {}),
    ...(job.tags.length > 0 ? { tags: [...job.tags] } : {}),
  };
}

/** A created job (spec 4.2): still pending, so `completed_at` and `result` are there, and null. */
export const CreatedJob = Type.Object(
  {
    job_id: Job.properties.job_id,
    type: Job.properties.type,
    status: StringEnum(JOB_STATUSES, { description: 'A pending status: backlogged or queued', examples: ['queued'] }),
    created_at: Job.properties.created_at,
    completed_at: Type.Null({ description: 'Always null on creation' }),
    result: Type.Null({ description: 'Always null on creation' }),
    error: Type.Optional(Job.properties.error),
    tags: Job.properties.tags,
  },
  {
    $id: 'CreatedJob',
    description: 'The job just created, still pending: `completed_at` and `result` are present and null (spec 2.1)',
    examples: [{ ...JOB_EXAMPLE, status: 'queued', completed_at: null, result: null }],
  },
);

export type CreatedJobView = Static<typeof CreatedJob>;

/**
 * The creation response: the job's view with the two fields that spec 2.1 requires there. A job
 * is created pending, so they have no value yet; stored under an idempotency key, this is also
 * what a replay answers.
 */
export function toCreatedJobView(job: JobSummary): CreatedJobView {
  if (job.completedAt !== null || job.result !== null) throw new Error(`job ${job.id} is not pending; it has no creation view`);
  return { ...toJobView(job), completed_at: null, result: null };
}

/**
 * A job as clients read it: the store keeps output URL paths (`/outputs/<key>/<name>`), shown at
 * this server's public URL (storedUrlAt). The API and the webhook payload both show jobs this way.
 */
export function presentJob(view: JobView, publicUrl: string): JobView {
  const urls = view.result?.urls;
  if (urls === undefined) return view;
  return { ...view, result: { ...view.result, urls: resolveUrls(urls, (u) => storedUrlAt(u, publicUrl)) } };
}

type ResultUrls = Static<typeof UrlList>;

const isUrlArray = (urls: ResultUrls): urls is string[] => Array.isArray(urls) && urls.every((u) => typeof u === 'string');

/** Each URL of a result's `urls` resolved, in the same shape (spec 2.2's three). */
function resolveUrls(urls: ResultUrls, resolve: (url: string) => string): ResultUrls {
  if (isUrlArray(urls)) return urls.map(resolve);
  if (Array.isArray(urls)) return urls.map((u) => ({ ...u, url: resolve(u.url) }));
  // A node app's outputs are named: {name: url}.
  return Object.fromEntries(Object.entries(urls).map(([name, u]) => [name, resolve(u)]));
}
