import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Nullable, StringEnum, closed } from '../../models/schema-kit.js';
import { TOKEN_LIMIT_FIELDS, TokenLimitsView, TokenSpendView } from './token-limit-views.js';

/**
 * The views of the caller's workspace (GET /workspace), its API tokens (GET and POST /tokens) and
 * its webhook secret, each declared once: the route's response schema (an OpenAPI component by
 * `$id`) and, by `Static`, the service's return type. No view has a token hash; only a creation
 * answer has a token in clear (`secret`), and only a secret view has the webhook secret.
 */

const WORKSPACE_ID = '1e2d3c4b-5a69-4f7e-8d9c-0b1a2c3d4e5f';
const TOKEN_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const USD = { pattern: '^\\d+\\.\\d{6}$' } as const;

/** A member's role in a workspace: owners add members; owners and admins manage tokens and the webhook secret. */
export const ROLES = ['owner', 'admin', 'member'] as const;

const WORKSPACE_EXAMPLE = {
  id: WORKSPACE_ID,
  name: 'default',
  role: 'owner' as const,
  member_email: 'owner@localhost',
  token: { id: TOKEN_ID, name: 'default' },
  balance_usd: '10.000000',
  held_usd: '0.030000',
  available_usd: '9.970000',
  limits: { max_concurrent_jobs: 4, max_backlogged_jobs: 100 },
};

export const WorkspaceView = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The workspace id', examples: [WORKSPACE_ID] }),
    name: Type.String({ description: 'The workspace name', examples: [WORKSPACE_EXAMPLE.name] }),
    role: Nullable(StringEnum(ROLES, { description: "The role of the token's member", examples: ['owner'] }), {
      description: "The current role of the member who created the calling token; null when that member is no longer in the workspace",
    }),
    member_email: Type.String({ description: 'The member who created the calling token: the API acts with their role', examples: [WORKSPACE_EXAMPLE.member_email] }),
    token: Type.Object(
      {
        id: Type.String({ description: 'The id of the calling token (as GET /tokens lists it)', examples: [TOKEN_ID] }),
        name: Type.String({ description: 'Its name', examples: ['default'] }),
      },
      { additionalProperties: false, description: 'The token this request was made with' },
    ),
    balance_usd: Type.String({ ...USD, description: 'The API balance: top-ups minus charges, in USD with six decimal places', examples: [WORKSPACE_EXAMPLE.balance_usd] }),
    held_usd: Type.String({ ...USD, description: 'The part of the balance held for jobs in progress (their prices)', examples: [WORKSPACE_EXAMPLE.held_usd] }),
    available_usd: Type.String({ ...USD, description: 'What new jobs can spend: balance minus held', examples: [WORKSPACE_EXAMPLE.available_usd] }),
    limits: Type.Object(
      {
        max_concurrent_jobs: Type.Integer({ minimum: 0, description: 'At most this many jobs queued or running at once', examples: [4] }),
        max_backlogged_jobs: Type.Integer({ minimum: 0, description: 'At most this many more waiting as backlogged; past both, creations answer 429', examples: [100] }),
      },
      { additionalProperties: false, description: "The workspace's job limits" },
    ),
  },
  { $id: 'Workspace', additionalProperties: false, description: "The caller's workspace: who the token acts as and what it can spend", examples: [WORKSPACE_EXAMPLE] },
);
export type WorkspaceView = Static<typeof WorkspaceView>;

const TOKEN_EXAMPLE = {
  id: TOKEN_ID,
  name: 'deploy bot',
  created_by: 'owner@localhost',
  created_at: '2026-11-20T09:00:00.000000Z',
  last_used_at: '2026-11-22T11:58:00.000000Z',
  revoked_at: null,
  current: false,
  limits: null,
  spend: null,
};

export const ApiTokenView = Type.Object(
  {
    id: Type.String({ description: 'The token id (not the token itself)', examples: [TOKEN_ID] }),
    name: Type.String({ description: 'The name given at creation', examples: [TOKEN_EXAMPLE.name] }),
    created_by: Type.String({ description: 'The member who created it: requests with it act with their role', examples: [TOKEN_EXAMPLE.created_by] }),
    created_at: Type.String({ format: 'date-time', description: 'When it was created', examples: [TOKEN_EXAMPLE.created_at] }),
    last_used_at: Nullable(Type.String({ format: 'date-time', description: 'When it was last used', examples: [TOKEN_EXAMPLE.last_used_at] }), {
      description: 'When it was last used (recorded at most once a minute); null: never',
    }),
    revoked_at: Nullable(Type.String({ format: 'date-time', description: 'When it was revoked', examples: ['2026-11-22T12:00:00.000000Z'] }), {
      description: 'When it was revoked (requests with it answer 401 since); null while it works',
    }),
    current: Type.Boolean({ description: 'Whether this is the token the request was made with', examples: [false] }),
    limits: Nullable(TokenLimitsView, {
      description: 'Its own limits, set at creation; null: only the workspace\'s',
      examples: [{ spend_limit_usd: '50.000000', spend_period: 'month', models: ['image/*'], max_concurrent_jobs: 2 }],
    }),
    spend: Nullable(TokenSpendView, {
      description: 'Its spend in the current period and its jobs in flight; null unless it has a spend or concurrency limit',
      examples: [{ period_start: '2026-11-01T00:00:00.000000Z', spent_usd: '12.340000', jobs_in_flight: 1 }],
    }),
  },
  { $id: 'ApiToken', additionalProperties: false, description: 'An API token of the workspace; never the token itself or its hash', examples: [TOKEN_EXAMPLE] },
);
export type ApiTokenView = Static<typeof ApiTokenView>;

export const ApiTokenList = Type.Object(
  { items: Type.Array(ApiTokenView, { description: 'Every token of the workspace, revoked ones included, newest first' }) },
  { $id: 'ApiTokenList', description: "The workspace's API tokens", examples: [{ items: [TOKEN_EXAMPLE] }] },
);
export type ApiTokenList = Static<typeof ApiTokenList>;

/** POST /tokens's body. */
export const ApiTokenRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'What the token is for, 1 to 200 characters', examples: ['deploy bot'] }),
    ...TOKEN_LIMIT_FIELDS,
  },
  {
    ...closed,
    $id: 'ApiTokenRequest',
    description: 'A new API token, with its own limits if any (they cannot be changed later: revoke it and create another)',
    examples: [{ name: 'deploy bot' }, { name: 'campaign app', spend_limit_usd: '50.00', spend_period: 'month', models: ['image/*'], max_concurrent_jobs: 2 }],
  },
);

const SECRET_EXAMPLE = 'mg_q3Zt0xV8kP2mN5bR7yW1cE4hJ6gL9sD0aF3uI8oT2e';

export const CreatedApiToken = Type.Object(
  {
    token: ApiTokenView,
    secret: Type.String({
      pattern: '^mg_',
      description: 'The token itself, for `Authorization: Bearer`. Shown only in this answer: the server keeps only its SHA-256 hash',
      examples: [SECRET_EXAMPLE],
    }),
  },
  {
    $id: 'CreatedApiToken',
    additionalProperties: false,
    description: 'The new token and, this once, its secret',
    examples: [{ token: { ...TOKEN_EXAMPLE, last_used_at: null }, secret: SECRET_EXAMPLE }],
  },
);
export type CreatedApiToken = Static<typeof CreatedApiToken>;

const WEBHOOK_SECRET_EXAMPLE = {
  workspace_id: WORKSPACE_ID,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  previous_secret_valid_until: null,
};

/** `mediagen admin webhook-secret show|rotate --json` prints the same. */
export const WebhookSecret = Type.Object(
  {
    workspace_id: Type.String({ format: 'uuid', description: 'The workspace', examples: [WORKSPACE_ID] }),
    secret: Type.String({ description: 'The Standard Webhooks signing secret webhooks are signed with now', examples: [WEBHOOK_SECRET_EXAMPLE.secret] }),
    previous_secret_valid_until: Nullable(
      Type.String({ format: 'date-time', description: 'Until when the previous secret also signs', examples: ['2026-11-23T12:00:00.000000Z'] }),
      { description: 'After a rotation, until when the previous secret also signs (24 hours); null otherwise' },
    ),
  },
  { $id: 'WebhookSecret', additionalProperties: false, description: "The workspace's webhook signing secret (docs/webhooks.md)", examples: [WEBHOOK_SECRET_EXAMPLE] },
);
export type WebhookSecret = Static<typeof WebhookSecret>;
