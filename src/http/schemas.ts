import { Type } from '@sinclair/typebox';
import { JOB_STATUSES } from '../domain/states.js';
import { StringEnum } from '../models/schema-kit.js';

/** Response shapes for the OpenAPI document (spec section 2). Responses are not filtered by them. */

export const ErrorBody = Type.Object({ error: Type.String({ minLength: 1 }) }, { description: 'Error' });

/** 402 (spec section 7): the error, and the billing explanation in `message`. */
export const BalanceBody = Type.Object(
  { error: Type.String({ minLength: 1 }), message: Type.String({ minLength: 1 }) },
  { description: 'The API balance does not cover the price of this request' },
);

export const SunsetBody = Type.Object(
  {
    error: Type.Literal('model_unavailable'),
    reason: Type.Literal('deprecated'),
    message: Type.String(),
    sunset_date: Type.String({ format: 'date' }),
    replacement: Type.Optional(Type.String()),
    migration_url: Type.Optional(Type.String({ format: 'uri' })),
  },
  { description: 'The model was retired on its sunset date. Treat as terminal.' },
);

const UrlList = Type.Union([
  Type.Array(Type.String({ format: 'uri' })),
  Type.Array(
    Type.Object({ type: StringEnum(['model', 'preview']), url: Type.String({ format: 'uri' }) }, { additionalProperties: false }),
  ),
  Type.Record(Type.String(), Type.String({ format: 'uri' })),
]);

export const JobResult = Type.Object(
  { urls: Type.Optional(UrlList), style_id: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export const JobError = Type.Object({ code: Type.String(), message: Type.Optional(Type.String()) });

export const Job = Type.Object({
  job_id: Type.String({ format: 'uuid' }),
  type: Type.String({ description: 'The model path, e.g. image/vendor-a/model-a-2/medium' }),
  status: StringEnum(JOB_STATUSES),
  created_at: Type.String({ format: 'date-time' }),
  completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  result: Type.Union([JobResult, Type.Null()]),
  error: Type.Optional(JobError),
});

export const CreatedJob = Type.Object({
  job_id: Type.String({ format: 'uuid' }),
  type: Type.String(),
  status: StringEnum(JOB_STATUSES),
  created_at: Type.String({ format: 'date-time' }),
  completed_at: Type.Null(),
  result: Type.Null(),
  error: Type.Optional(JobError),
});

/** On a POST answered from its Idempotency-Key's stored first response. */
export const ReplayedHeader = {
  'idempotent-replayed': {
    type: 'string',
    const: 'true',
    description: 'This is the stored response to an earlier request with the same Idempotency-Key; no new job was created',
  },
};

/** The answers an Idempotency-Key adds to a POST. */
export const IdempotencyErrors = {
  409: Type.Object(
    { error: Type.String({ minLength: 1 }) },
    { description: 'The first request with this Idempotency-Key is still being processed; retry after `Retry-After` seconds' },
  ),
  422: Type.Object(
    { error: Type.String({ minLength: 1 }) },
    { description: 'This Idempotency-Key was used in the last 24 hours with a different endpoint, body or job headers' },
  ),
};

export const JobPage = Type.Object({
  items: Type.Array(Job),
  next_cursor: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Pass as `cursor` for the next page; null on the last page.',
  }),
});

export const DeletedJob = Type.Object({ job_id: Type.String({ format: 'uuid' }), deleted: Type.Literal(true) });

export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, ErrorBody]));
