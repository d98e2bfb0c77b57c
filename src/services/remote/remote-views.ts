import { Type } from '@sinclair/typebox';
import type { ObjectOptions, Static } from '@sinclair/typebox';
import { MAX_STYLE_ARTIFACT_BYTES } from '../../engines/engine.js';
import { StringEnum, closed } from '../../models/schema-kit.js';
import { FAIL_MESSAGE_MAX, REMOTE_PATH_PREFIX, STOP_REASONS, WORKER_FAIL_CODES } from './remote-constants.js';
import { PATTERN_MAX_LENGTH, PATTERNS_MAX } from './remote-patterns.js';

/**
 * The worker protocol's bodies and answers (docs/workers.md), declared once: the routes' schemas
 * (OpenAPI, tag `workers`), the use cases' validation (models/validation.ts) and, by `Static`,
 * their types, which the remote worker (src/worker/remote/) sends and reads too. It imports them
 * with `import type` only, so it never loads TypeBox or this module; what it needs at run time is
 * in remote-constants.ts. Requests carry no `$id`; the routes name their components.
 */
/** 24 hours in microseconds: longer than any output a job makes. */
export const MAX_DURATION_US = 86_400_000_000;

const JOB_ID = '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69';
const LEASE_ID = '5d1c9a7e-2b3f-4e8d-9a6c-1f0e2d3c4b5a';
const MODEL = 'image/vendor-a/model-a-2/medium';
const BASE = 'https://mediagen.example';
const INPUT_URL = `${BASE}${REMOTE_PATH_PREFIX}/jobs/${JOB_ID}/inputs/0?exp=1795435804&lease=${LEASE_ID}&tok=7c0e9a52-1d3b-4f6e-8a2c-9b4d5e6f7a8b&sig=9f2c6b1e0a7d3c5b8e4f1a2d6c9b0e3f7a5d8c1b4e2f6a9d0c3b7e5f1a8d2c4b`;
const UPLOAD_URL = `${BASE}${REMOTE_PATH_PREFIX}/jobs/${JOB_ID}/outputs/`;
const AT = '2026-11-22T12:00:30.000000Z';
const DEADLINE = '2026-11-22T12:03:00.000000Z';

/** Progress a remote worker reports, in order; each is what the matching engine stage means. */
export const WORKER_STAGES = ['processing', 'sampling', 'intermediate-complete'] as const;

/**
 * A JSON object of any fields (a request, a style artifact), typed as one: TypeBox's Static of an
 * open `Type.Object({})` is `{}`, which any value but null satisfies. The schema is that object's.
 */
const OpenObject = (options: ObjectOptions) => Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true, ...options }));

const LeaseId = Type.String({ minLength: 1, maxLength: 100, description: 'The lease of the claim this worker holds (its `lease_id`)', examples: [LEASE_ID] });

const outputName = (description: string, example: string) =>
  Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description, examples: [example] });

const CLAIM_EXAMPLE = { models: ['image/*'], pool: 'gpu-a', max: 1, wait_ms: 20000, worker_id: 'gpu-box-1' };

export const ClaimRequest = Type.Object(
  {
    models: Type.Optional(
      Type.Array(
        Type.String({ minLength: 1, maxLength: PATTERN_MAX_LENGTH, description: 'A model glob pattern: `*` any characters (`/` included), `?` one', examples: ['video/*'] }),
        { maxItems: PATTERNS_MAX, description: "Only models these patterns name (each must be one the token names too); absent: all the token's remote-bound models", examples: [['image/*']] },
      ),
    ),
    pool: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,62}$', description: 'Only models bound to this pool (`model_engines`: `remote:<pool>`); absent: any pool', examples: ['gpu-a'] })),
    max: Type.Optional(Type.Integer({ minimum: 1, maximum: 32, default: 1, description: 'Jobs to take at most; take only what you start at once', examples: [1] })),
    wait_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 30000, default: 20000, description: 'How long to wait for a job when none is queued (long poll); 0 answers at once', examples: [20000] })),
    worker_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[ -~]+$', description: 'This worker instance, for presence and logs (printable ASCII); absent: `default`', examples: ['gpu-box-1'] })),
  },
  { ...closed, description: 'What the worker takes', examples: [CLAIM_EXAMPLE] },
);
export type ClaimRequestBody = Static<typeof ClaimRequest>;

const CLAIMED_EXAMPLE = {
  id: JOB_ID,
  model: MODEL,
  request: { prompt: 'a lighthouse on a cliff at dusk', image_url: 'https://assets.example/input.png', aspect_ratio: '16:9', resolution: '1K' },
  attempt: 1,
  lease_id: LEASE_ID,
  lease_expires_at: AT,
  deadline: DEADLINE,
  inputs: { image_url: INPUT_URL },
  styles: {},
  upload_url: UPLOAD_URL,
};

/** The largest engine state a worker may store with a job, in bytes of JSON. */
export const MAX_UPSTREAM_STATE_BYTES = 16 * 1024;

/**
 * An engine's record of work it started elsewhere for the job (a provider's job, a ComfyUI prompt):
 * stored with the job under the lease and handed to the next claim, so a restarted run resumes that
 * work instead of starting it twice (docs/workers.md, "Engine state").
 */
export const UpstreamState = Type.Object(
  {
    engine: Type.String({ minLength: 1, maxLength: 100, description: 'Which engine instance holds the work: `comfyui:gpu`, `provider:replicate`', examples: ['comfyui:gpu'] }),
    id: Type.String({ minLength: 1, maxLength: 200, description: "The work's id there: a ComfyUI prompt_id, a provider's job id", examples: ['5d1c2b4e-9f3a-4c8e-8a61-0e2f7d9b3c10'] }),
    state: OpenObject({ description: `The engine's own small JSON (at most ${MAX_UPSTREAM_STATE_BYTES} bytes)`, examples: [{ client_id: 'b7c1', status: 'running' }] }),
  },
  { ...closed, description: 'Work an engine started elsewhere for the job', examples: [{ engine: 'comfyui:gpu', id: '5d1c2b4e-9f3a-4c8e-8a61-0e2f7d9b3c10', state: { client_id: 'b7c1' } }] },
);
export type UpstreamStateView = Static<typeof UpstreamState>;

export const ClaimedJob = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The job', examples: [JOB_ID] }),
    model: Type.String({ description: 'The model path (the job type)', examples: [MODEL] }),
    request: OpenObject({ description: 'The validated request body, defaults applied', examples: [CLAIMED_EXAMPLE.request] }),
    attempt: Type.Integer({ minimum: 1, description: 'Which claim of the job this is, from 1', examples: [1] }),
    lease_id: Type.String({ description: 'Send it with every call about this job', examples: [LEASE_ID] }),
    lease_expires_at: Type.String({ format: 'date-time', description: 'When the claim lapses without a progress call (renew every third of the lease)', examples: [AT] }),
    deadline: Type.String({ format: 'date-time', description: "The job's first claim plus its model's timeout: past it the job fails with `timeout`", examples: [DEADLINE] }),
    inputs: Type.Record(Type.String(), Type.String({ format: 'uri' }), {
      description: 'For every http(s) URL field of `request` (by its path, e.g. `image_url` or `styles[0].url`): a signed URL to GET the input from, valid 10 minutes, no Authorization. data: URIs stay inline in `request`.',
      examples: [CLAIMED_EXAMPLE.inputs],
    }),
    styles: Type.Record(Type.String(), OpenObject({}), {
      description: "The artifact of each trained style the request names (`styles[].id`), by style id",
      examples: [{}],
    }),
    upload_url: Type.String({ format: 'uri', description: 'PUT each output file to this prefix plus its name, with `?lease_id=`', examples: [UPLOAD_URL] }),
    upstream: Type.Optional({ ...UpstreamState, description: 'What an earlier run of the job stored with it (`upstream` of a progress call); absent on a first run' }),
  },
  { $id: 'ClaimedJob', description: 'A job this worker now holds', examples: [CLAIMED_EXAMPLE] },
);
export type ClaimedJobView = Static<typeof ClaimedJob>;

export const ClaimAnswer = Type.Object(
  { jobs: Type.Array(ClaimedJob, { description: 'The jobs taken, oldest first; empty when none came within wait_ms' }) },
  { $id: 'ClaimAnswer', description: 'The jobs this claim took', examples: [{ jobs: [CLAIMED_EXAMPLE] }] },
);
export type ClaimAnswerView = Static<typeof ClaimAnswer>;

export const ProgressRequest = Type.Object(
  {
    lease_id: LeaseId,
    status: Type.Optional(StringEnum(WORKER_STAGES, { description: 'The stage reached; the job moves forward to it (stages between are passed). The current one: a heartbeat', examples: ['sampling'] })),
    fraction: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'How much of the work is done, 0 to 1', examples: [0.4] })),
    preview: Type.Optional(outputName('An uploaded preview file, shown in the result while the job runs (with `intermediate-complete` only)', 'preview.jpg')),
    upstream: Type.Optional({ ...UpstreamState, description: 'Stores the engine state with the job, replacing what was stored; the next claim of the job carries it' }),
  },
  { ...closed, description: 'A heartbeat, with progress', examples: [{ lease_id: LEASE_ID, status: 'sampling', fraction: 0.4 }] },
);
export type ProgressRequestBody = Static<typeof ProgressRequest>;

export const ProgressAnswer = Type.Object(
  {
    lease_expires_at: Type.String({ format: 'date-time', description: 'The renewed end of the lease', examples: [AT] }),
    status: StringEnum(['scheduled', ...WORKER_STAGES], { description: "The job's status now", examples: ['sampling'] }),
  },
  { $id: 'WorkerProgress', description: 'The lease is renewed', examples: [{ lease_expires_at: AT, status: 'sampling' }] },
);
export type ProgressAnswerView = Static<typeof ProgressAnswer>;

export const UploadAnswer = Type.Object(
  {
    name: Type.String({ description: 'The stored file name', examples: ['output.png'] }),
    size: Type.Integer({ minimum: 0, description: 'Bytes stored', examples: [482113] }),
    content_type: Type.String({ description: 'Its media type, from its name and agreeing with its bytes', examples: ['image/png'] }),
  },
  { $id: 'WorkerUpload', description: 'The file is stored (replacing one of the same name)', examples: [{ name: 'output.png', size: 482113, content_type: 'image/png' }] },
);
export type UploadAnswerView = Static<typeof UploadAnswer>;

const COMPLETE_EXAMPLE = { lease_id: LEASE_ID, outputs: [{ name: 'output.png' }] };

export const CompleteRequest = Type.Object(
  {
    lease_id: LeaseId,
    outputs: Type.Array(
      Type.Object(
        {
          name: outputName('An uploaded file (letters, digits, `.`, `_`, `-`; no leading dot)', 'output.png'),
          role: Type.Optional(StringEnum(['model', 'preview'], { description: 'For outputs of more than one kind (a 3D model and its render): which this is', examples: ['model'] })),
          key: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A named output: the result then maps each key to its URL', examples: ['image'] })),
          duration_us: Type.Optional(
            Type.Integer({ minimum: 0, maximum: MAX_DURATION_US, description: "The main output's measured length in microseconds, at most 24 hours (metered models are charged by it)", examples: [5_000_000] }),
          ),
        },
        { ...closed, description: 'One uploaded file', examples: [{ name: 'output.png' }] },
      ),
      { minItems: 1, maxItems: 32, description: 'The uploaded files the result lists, main output first', examples: [COMPLETE_EXAMPLE.outputs] },
    ),
    style: Type.Optional(
      OpenObject({ description: `A training job's style artifact (JSON, at most ${MAX_STYLE_ARTIFACT_BYTES} bytes): required exactly for models that train styles`, examples: [{ format: 'lora', weights: 'base64...' }] }),
    ),
  },
  { ...closed, description: 'The job is done', examples: [COMPLETE_EXAMPLE] },
);
export type CompleteRequestBody = Static<typeof CompleteRequest>;
export type CompletedOutputBody = CompleteRequestBody['outputs'][number];

export const CompleteAnswer = Type.Object(
  { status: Type.Literal('completed', { description: 'Always `completed`' }) },
  { $id: 'WorkerComplete', description: 'The job is completed and charged', examples: [{ status: 'completed' }] },
);
export type CompleteAnswerView = Static<typeof CompleteAnswer>;

export const FailRequest = Type.Object(
  {
    lease_id: LeaseId,
    code: StringEnum(WORKER_FAIL_CODES, { description: "The job's error code (docs/errors.md)", examples: ['engine_failed'] }),
    message: Type.String({ minLength: 1, maxLength: FAIL_MESSAGE_MAX, description: 'What went wrong, shown to the client: no paths, hosts or secrets', examples: ['the model ran out of GPU memory'] }),
    retryable: Type.Optional(Type.Boolean({ default: false, description: 'Another attempt may succeed: the job goes back to the queue while it has attempts left', examples: [false] })),
  },
  { ...closed, description: 'The run failed', examples: [{ lease_id: LEASE_ID, code: 'engine_failed', message: 'the model ran out of GPU memory', retryable: true }] },
);
export type FailRequestBody = Static<typeof FailRequest>;

export const FailAnswer = Type.Object(
  { status: StringEnum(['failed', 'queued'], { description: '`failed`, or `queued` when it went back to the queue for another attempt', examples: ['queued'] }) },
  { $id: 'WorkerFail', description: 'What became of the job', examples: [{ status: 'queued' }] },
);
export type FailAnswerView = Static<typeof FailAnswer>;

/** The `reason` of a 409 on a job route (the WorkerConflict answer, http/openapi/remote-schemas.ts). */
export const StopReasonField = StringEnum(STOP_REASONS, {
  description:
    "Why the worker must stop: the job was cancelled, has completed (a repeated complete), was deleted, its lease is no longer this worker's (requeued, reclaimed or failed), or it passed its deadline and failed",
  examples: ['cancelled'],
});
