import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { GLOB_MAX_LENGTH } from '../../lib/glob.js';
import { Nullable, StringEnum } from '../../models/schema-kit.js';
import { SPEND_PERIODS } from '../../domain/token-limits.js';
import { WORKSPACE_LIMITS } from '../../config/options.js';

/**
 * An API token's own limits as the API takes them (POST /tokens) and shows them (GET /tokens):
 * declared once here, as the schemas the routes and the OpenAPI document use.
 */

const USD_IN = '^\\d{1,12}(\\.\\d{1,6})?$';
const USD_OUT = { pattern: '^\\d+\\.\\d{6}$' } as const;
/** More than this many patterns on one token is a mistake, not a need (as on worker tokens). */
export const TOKEN_PATTERNS_MAX = 100;

/** The optional fields of POST /tokens that set a token's limits; none of them: no limits of its own. */
export const TOKEN_LIMIT_FIELDS = {
  spend_limit_usd: Type.Optional(
    Type.String({
      pattern: USD_IN,
      description:
        'At most this much (USD, up to six decimals, as a string so no float rounds it) held or charged for jobs created with this token in `spend_period`. ' +
        'A create past it answers 402 with code `token_budget_exceeded`; a failed job gives its hold back',
      examples: ['25.00'],
    }),
  ),
  spend_period: Type.Optional(
    StringEnum(SPEND_PERIODS, {
      description: 'What `spend_limit_usd` covers: the current UTC `day`, the current UTC `month`, or the token\'s whole life (`total`, the default). Only with `spend_limit_usd`',
      examples: ['month'],
    }),
  ),
  models: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: GLOB_MAX_LENGTH }), {
      minItems: 1,
      maxItems: TOKEN_PATTERNS_MAX,
      description: 'Model path patterns (`*` any characters, `?` one) this token may create jobs of; another model answers 403 with code `model_not_allowed`',
      examples: [['image/*']],
    }),
  ),
  max_concurrent_jobs: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: WORKSPACE_LIMITS.maxConcurrentJobs.max,
      description: "At most this many of this token's jobs in flight (backlogged, queued or running); past it a create answers 429 `too_many_jobs` with Retry-After",
      examples: [2],
    }),
  ),
};

export const TokenLimitsView = Type.Object(
  {
    spend_limit_usd: Nullable(Type.String(USD_OUT), { description: 'The spend limit, six decimals; null: none' }),
    spend_period: Nullable(StringEnum(SPEND_PERIODS), { description: 'The period the spend limit covers; null without one' }),
    models: Nullable(Type.Array(Type.String()), { description: 'The model patterns it may use; null: every model' }),
    max_concurrent_jobs: Nullable(Type.Integer({ minimum: 1 }), { description: 'Its jobs in flight at most; null: only the workspace\'s limit' }),
  },
  { additionalProperties: false, description: "The token's own limits (the workspace's balance and limits apply as well)" },
);
export type TokenLimitsView = Static<typeof TokenLimitsView>;

export const TokenSpendView = Type.Object(
  {
    period_start: Type.String({ format: 'date-time', description: 'Where the current period began (UTC midnight, the first of the UTC month, or the epoch for `total`)' }),
    spent_usd: Type.String({ ...USD_OUT, description: 'Charged plus held for jobs in flight, for jobs created with this token in the period' }),
    jobs_in_flight: Type.Integer({ minimum: 0, description: 'Its jobs not yet ended (their holds still open)' }),
  },
  { additionalProperties: false, description: 'What the token has used of its limits now' },
);
export type TokenSpendView = Static<typeof TokenSpendView>;
