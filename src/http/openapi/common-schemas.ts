import { Type } from '@sinclair/typebox';
import type { TObject } from '@sinclair/typebox';
import { CreatedJob, Job, JobPage } from '../../services/common/job-view.js';
import { IDEMPOTENCY_KEY_MAX } from '../request/request-headers.js';
import { StringEnum } from '../../models/schema-kit.js';
import { TERMINAL_STATUSES } from '../../domain/states.js';
import { MAX_TAGS, ONE_TAG, TAG_MAX_LENGTH } from '../../domain/job-tags.js';

/**
 * Response shapes (spec sections 2 and 7). A schema with an `$id` is an OpenAPI component of that
 * name, referenced with `$ref` (openapi.ts). Responses are not filtered by them: the tests check
 * every response against them instead (test/helpers/checked-inject.ts).
 */
export { CreatedJob, Job, JobPage };

export const ErrorBody = Type.Object(
  { error: Type.String({ minLength: 1, description: 'What went wrong, in words', examples: ["query parameter 'limit' must be an integer from 1 to 1000, got '0'"] }) },
  { $id: 'Error', description: 'An error (spec 7)', examples: [{ error: "job '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69' not found" }] },
);

/** 402 (spec section 7): the error, and the billing explanation in `message`; `code` tells a token's own budget from the balance. */
export const BalanceBody = Type.Object(
  {
    error: Type.String({ minLength: 1, description: 'What went wrong', examples: ['insufficient API balance'] }),
    message: Type.String({
      minLength: 1,
      description: 'The API balance is separate from the compute-unit balance and must be topped up on its own; or, with `code`, what a token budget is',
      examples: ["The API balance is separate from the workspace's compute-unit balance in the web application and must be topped up on its own"],
    }),
    code: Type.Optional(
      Type.Literal('token_budget_exceeded', { description: "Present when the calling token's own spend limit refused, not the workspace's balance (docs/routing.md)" }),
    ),
  },
  { $id: 'BalanceError', description: "The API balance, or the calling token's own spend limit, does not cover the price of this request" },
);

/** 403 of a create: the error, and `code` when the calling token's own `models` patterns refused the model. */
export const ForbiddenBody = Type.Object(
  {
    error: Type.String({ minLength: 1, description: 'What went wrong, in words', examples: ["this API token may create jobs of 'image/*' only, not of 'video/vendor-c/model-c'"] }),
    code: Type.Optional(
      Type.Literal('model_not_allowed', {
        description: "Present when the calling token's own `models` patterns do not allow this model (a node app's run is `node-app/<slug>`); absent when API access is disabled for the workspace (docs/routing.md)",
      }),
    ),
  },
  {
    $id: 'ForbiddenError',
    description: "API access is disabled for the workspace, or (`code: model_not_allowed`) the calling token may not create jobs of this model; nothing was created",
    examples: [{ error: "this API token may create jobs of 'image/*' only, not of 'video/vendor-c/model-c'", code: 'model_not_allowed' }],
  },
);

export const SunsetBody = Type.Object(
  {
    error: Type.Literal('model_unavailable', { description: 'Always `model_unavailable`' }),
    reason: Type.Literal('deprecated', { description: 'Always `deprecated`' }),
    message: Type.String({ description: 'What happened and what to use instead', examples: ['image/vendor-g/model-g-3 was retired on 2026-05-13; use image/vendor-g/model-g-5-lite'] }),
    sunset_date: Type.String({ format: 'date', description: 'The day the model was retired', examples: ['2026-05-13'] }),
    replacement: Type.Optional(Type.String({ description: 'The model path to use instead, when there is one', examples: ['image/vendor-g/model-g-5-lite'] })),
    migration_url: Type.Optional(Type.String({ format: 'uri', description: 'Where the migration is described, when there is a replacement', examples: ['https://mediagen.example/deprecations'] })),
  },
  { $id: 'Error410', description: 'The model was retired on its sunset date. Treat as terminal.' },
);

/** 413 of POST /assets: the refusal, and for a quota refusal the workspace's usage and quota. */
export const AssetTooLarge = Type.Object(
  {
    error: Type.String({ minLength: 1, description: 'What went wrong', examples: ['the file is larger than the 78.6 MB an asset may be'] }),
    used_bytes: Type.Optional(Type.Number({ description: "Bytes the workspace's assets take (quota refusals)", examples: [10_000_000_000] })),
    quota_bytes: Type.Optional(Type.Number({ description: "The workspace's asset quota in bytes (quota refusals)", examples: [10_737_418_240] })),
  },
  { $id: 'AssetTooLarge', description: 'The file is larger than the server accepts, or the workspace has no room for it under its storage quota' },
);

export const DeletedJob = Type.Object(
  {
    job_id: Type.String({ format: 'uuid', description: 'The deleted job', examples: ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'] }),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { $id: 'DeletedJob', description: 'The job and its outputs are gone' },
);

export const RETRY_AFTER = {
  type: 'string',
  pattern: '^[0-9]+$',
  description: 'Seconds to wait before retrying',
  examples: ['5'],
};

/** The Idempotency-Key request header of every POST that creates (a job, an asset). */
export const IdempotencyKeyHeader = Type.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX + 2,
  description:
    'Makes a retry safe: the same key with the same request within 24 hours answers the first response again (with `Idempotent-Replayed: true`) and creates nothing more. 1 to 255 printable ASCII characters, bare or as a quoted string; per workspace. See docs/errors.md.',
});

/** X-Mediagen-Tags on every create (domain/job-tags.ts), described here; its reader and the use case check it. */
export const TagsHeader = Type.String({
  pattern: `^ *${ONE_TAG} *(, *${ONE_TAG} *)*$`,
  description:
    `Tags for the job, comma-separated: up to ${MAX_TAGS} of 1 to ${TAG_MAX_LENGTH} characters of a-z, 0-9, \`_\`, \`.\`, \`:\` and \`-\` (duplicates count once). ` +
    'Shown in the job, filtered by `GET /jobs?tag=`, summed by `GET /usage/summary?group_by=tag`; anything else is a 400 naming the header. See docs/routing.md "Tags".',
  examples: ['team-a,campaign-7'],
});

/** On a POST answered from its Idempotency-Key's stored first response. */
export const ReplayedHeader = {
  'idempotent-replayed': {
    type: 'string',
    const: 'true',
    description: 'This is the stored response to an earlier request with the same Idempotency-Key; no new job was created',
  },
};

/** The request header that asks a creation to wait for its job (docs/clients.md). */
export const PreferHeader = Type.String({
  description:
    '`wait` or `wait=N` (RFC 7240), N seconds from 0 to 60 (default 60; more is 60): answer once the job reached a terminal status or N seconds ' +
    'passed, with the job as GET /jobs/{id} shows it and `Preference-Applied`. A value that is not a whole number is ignored.',
  examples: ['wait=30'],
});

/** On a creation that waited for its job (`Prefer: wait`). */
export const PreferenceAppliedHeader = {
  'preference-applied': {
    type: 'string',
    pattern: '^wait=[0-9]+$',
    description: 'The wait this answer applied (`Prefer: wait`): the body is the job as GET /jobs/{id} shows it',
    examples: ['wait=60'],
  },
};

/** What a creation answers: the job as created, or, after `Prefer: wait`, as GET /jobs/{id} shows it. */
export const CreatedOrWaitedJob = Type.Union([CreatedJob, Job], {
  $id: 'CreatedOrWaitedJob',
  description: 'The created job, pending (CreatedJob); with `Prefer: wait`, the job as GET /jobs/{id} shows it when the wait ended (Job)',
  examples: CreatedJob.examples as unknown[],
});

/** POST /jobs/{id}/cancel of a job that already ended: the error and the status it ended in. */
export const JobEndedBody = Type.Object(
  {
    error: Type.String({ minLength: 1, description: 'What went wrong', examples: ["job '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69' has already ended: it is completed"] }),
    status: StringEnum(TERMINAL_STATUSES, { description: 'The terminal status the job is in', examples: ['completed'] }),
  },
  { $id: 'JobEndedError', description: 'The job has already reached a terminal status; nothing changed' },
);

/** On every success of a deprecated model (spec 9). */
export const DeprecationHeaders = {
  deprecation: { type: 'string', const: 'true', description: 'This model is deprecated' },
  sunset: { type: 'string', description: 'RFC 1123 date from which the model answers 410', examples: ['Sat, 19 Jun 2027 00:00:00 GMT'] },
  link: { type: 'string', description: '`<migration_url>; rel="deprecation"`', examples: ['<https://mediagen.example/deprecations>; rel="deprecation"'] },
};

/** What each error status means on this API, and the headers it carries. */
const ERROR_STATUS: Record<number, { readonly description: string; readonly headers?: Record<string, object> }> = {
  400: { description: 'Invalid request: body, query parameters or headers; the message names what is wrong' },
  401: {
    description: 'Missing or invalid bearer token',
    headers: { 'www-authenticate': { type: 'string', const: 'Bearer realm="mediagen"', description: 'The scheme to authenticate with' } },
  },
  403: { description: 'API access is disabled for the workspace, or the caller may not do this' },
  404: { description: 'Not found, or the caller may not see it' },
  409: {
    description: 'The first request with this Idempotency-Key is still being processed; retry after `Retry-After` seconds',
    headers: { 'retry-after': RETRY_AFTER },
  },
  413: { description: 'The request body is larger than the server accepts' },
  415: { description: 'The request body is not Content-Type: application/json' },
  422: { description: 'This Idempotency-Key was used in the last 24 hours with a different endpoint, body or job headers' },
  429: {
    description: 'The workspace runs its maximum number of concurrent jobs and its backlog is full, or the calling token has its own maximum of jobs in flight',
    headers: { 'retry-after': RETRY_AFTER },
  },
  503: {
    description: 'The server cannot serve the request now (storage failing, full disk, shutting down); retry after `Retry-After` seconds',
    headers: { 'retry-after': RETRY_AFTER },
  },
};

type ErrorResponse = TObject<typeof ErrorBody.properties>;

/** The catalogue's `{error}` body for each status, with its meaning and headers. */
export function errorResponses(...statuses: number[]): Record<number, ErrorResponse> {
  return Object.fromEntries(
    statuses.map((s) => {
      const meta = ERROR_STATUS[s];
      if (!meta) throw new Error(`no description of error status ${s}`);
      return [s, { ...ErrorBody, description: meta.description, ...(meta.headers ? { headers: meta.headers } : {}) }];
    }),
  );
}

/** The answers an Idempotency-Key adds to a POST. */
export const IdempotencyErrors = errorResponses(409, 422);


/** For routes that take no query parameters: any is refused (400), not silently ignored. */
export const NoQuery = Type.Object({}, { additionalProperties: false });
