import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { formatMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import { StringEnum } from '../../models/schema-kit.js';

/**
 * The list views of usage, node-app versions and webhook deliveries (of a job, and of the
 * workspace), each declared once: the
 * route's response schema (and OpenAPI component, by `$id`) and, by `Static`, the service's
 * return type.
 */

/**
 * A page of `limit` rows from a query asked for `limit + 1`: the extra row tells whether another
 * page exists, so the last page says null. The cursor is the last row's time (`at`).
 */
export function pageOf<R>(rows: readonly R[], limit: number, at: (row: R) => Micros): { page: R[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  return { page, next_cursor: rows.length > limit ? formatMicros(at(page[page.length - 1]!)) : null };
}

/** A page's `next_cursor`: the last item's time (`what`), or null on the last page. */
export const Cursor = (what: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: `Pass as \`cursor\` for the next page (${what}); null on the last page.`,
    examples: ['2026-11-22T12:00:00.000000Z'],
  });

const USAGE_EXAMPLE = {
  job_id: '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69',
  type: 'image/vendor-a/model-a-2/medium',
  completed_at: '2026-11-22T12:00:04.250000Z',
  cost_usd: '0.030000',
  compute_units: 3,
};

export const UsageItem = Type.Object(
  {
    job_id: Type.String({ format: 'uuid', description: 'The completed job', examples: [USAGE_EXAMPLE.job_id] }),
    type: Type.String({ description: 'The job type (model path)', examples: [USAGE_EXAMPLE.type] }),
    completed_at: Type.String({ format: 'date-time', description: 'When the job completed and was charged', examples: [USAGE_EXAMPLE.completed_at] }),
    cost_usd: Type.String({ description: 'What the job was charged, in USD with six decimal places', pattern: '^\\d+\\.\\d{6}$', examples: [USAGE_EXAMPLE.cost_usd] }),
    compute_units: Type.Number({ description: 'The charge in compute units: 1 compute unit = $0.01', examples: [USAGE_EXAMPLE.compute_units] }),
  },
  { $id: 'UsageItem', additionalProperties: false, description: 'One completed metered job', examples: [USAGE_EXAMPLE] },
);
export type UsageItem = Static<typeof UsageItem>;

export const UsagePage = Type.Object(
  { items: Type.Array(UsageItem, { description: 'Completed jobs, newest first' }), next_cursor: Cursor('completion time') },
  { $id: 'UsagePage', description: 'A page of the usage report', examples: [{ items: [USAGE_EXAMPLE], next_cursor: null }] },
);
export type UsagePage = Static<typeof UsagePage>;

/** `input_openapi_schema` and `output_openapi_schema`; other keys are the author's, kept as given. */
const OpenApiSchema = (what: string) =>
  Type.Object(
    {
      type: Type.String({ description: 'Always `object`', examples: ['object'] }),
      properties: Type.Record(Type.String(), Type.Unknown(), { description: `The app's ${what}, by name`, examples: [{ prompt: { type: 'string' } }] }),
      required: Type.Array(Type.String(), { description: `The ${what} that must be given`, examples: [['prompt']] }),
    },
    { description: `The JSON Schema of the app's ${what}` },
  );

const VERSION_EXAMPLE = {
  id: '5d0c2b6e-8a8f-4f3e-9b1a-6c2d7e8f9a01',
  author_id: 'ada@example.com',
  workspace_id: '1e2d3c4b-5a69-4f7e-8d9c-0b1a2c3d4e5f',
  name: 'Product shots',
  slug: 'product-shots',
  description: 'Studio product photos from a prompt',
  scope: 'workspace',
  created_at: '2026-11-01T09:00:00.000000Z',
  updated_at: '2026-11-20T09:00:00.000000Z',
  version: 3,
  version_created_at: '2026-11-20T09:00:00.000000Z',
  username: 'ada',
  example_outputs: ['https://mediagen.example/examples/product-shot.png'],
  input_openapi_schema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  output_openapi_schema: { type: 'object', properties: { image: { type: 'string' } }, required: ['image'] },
  node_app_version_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
};

const ex = <K extends keyof typeof VERSION_EXAMPLE>(k: K) => ({ examples: [VERSION_EXAMPLE[k]] });

/** Spec 2.5: the app's fields and the version's, in one item. */
export const NodeAppVersion = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The node app id', ...ex('id') }),
    author_id: Type.String({ description: "The author's email (members have no other id)", ...ex('author_id') }),
    workspace_id: Type.String({ format: 'uuid', description: 'The workspace that owns the app', ...ex('workspace_id') }),
    name: Type.String({ description: "The app's display name", ...ex('name') }),
    slug: Type.String({ description: "The app's URL name, unique in the workspace", ...ex('slug') }),
    description: Type.String({ description: 'What the app does', ...ex('description') }),
    scope: Type.String({ description: 'Always `workspace`: every app of the workspace is listed', ...ex('scope') }),
    created_at: Type.String({ format: 'date-time', description: 'When the app was created', ...ex('created_at') }),
    updated_at: Type.String({ format: 'date-time', description: 'The last publish time', ...ex('updated_at') }),
    version: Type.Integer({ minimum: 1, description: 'The version number, from 1', ...ex('version') }),
    version_created_at: Type.String({ format: 'date-time', description: 'When this version was published', ...ex('version_created_at') }),
    username: Type.String({ description: "The local part of the author's email", ...ex('username') }),
    example_outputs: Type.Array(Type.String({ format: 'uri' }), { description: 'URLs of outputs the app made', ...ex('example_outputs') }),
    input_openapi_schema: OpenApiSchema('inputs'),
    output_openapi_schema: OpenApiSchema('outputs'),
    node_app_version_id: Type.String({ format: 'uuid', description: 'The version id', ...ex('node_app_version_id') }),
  },
  { $id: 'NodeAppVersion', description: 'A runnable version of a node app (spec 2.5)', examples: [VERSION_EXAMPLE] },
);
export type NodeAppVersion = Static<typeof NodeAppVersion>;

const KeyMapping = (description: string, example: Record<string, string>) =>
  Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], { description, examples: [example] });

const { node_app_version_id: _versionId, ...APP_FIELDS } = VERSION_EXAMPLE;
const NODE_APP_EXAMPLE = {
  ...APP_FIELDS,
  last_version_id: VERSION_EXAMPLE.node_app_version_id,
  input_key_mapping: { prompt: 'inputs.prompt' },
  output_key_mapping: { 'steps.img.urls[0]': 'image' },
};

/** GET /node-apps/{id}: the original API's node app, as of one of its versions. */
export const NodeApp = Type.Object(
  {
    id: NodeAppVersion.properties.id,
    author_id: NodeAppVersion.properties.author_id,
    workspace_id: NodeAppVersion.properties.workspace_id,
    name: NodeAppVersion.properties.name,
    slug: NodeAppVersion.properties.slug,
    description: NodeAppVersion.properties.description,
    scope: NodeAppVersion.properties.scope,
    created_at: NodeAppVersion.properties.created_at,
    updated_at: NodeAppVersion.properties.updated_at,
    last_version_id: Type.String({ format: 'uuid', description: "The id of the app's newest version", examples: [NODE_APP_EXAMPLE.last_version_id] }),
    version: Type.Integer({ minimum: 1, description: 'The number of the version asked for', ...ex('version') }),
    version_created_at: Type.String({ format: 'date-time', description: 'When the version asked for was published', ...ex('version_created_at') }),
    username: NodeAppVersion.properties.username,
    example_outputs: NodeAppVersion.properties.example_outputs,
    input_openapi_schema: OpenApiSchema('inputs'),
    output_openapi_schema: OpenApiSchema('outputs'),
    input_key_mapping: KeyMapping(
      'Each input name to the graph key it is read by (`inputs.<name>`); null when the version has no graph and cannot be executed',
      NODE_APP_EXAMPLE.input_key_mapping,
    ),
    output_key_mapping: KeyMapping(
      'Each step result the graph outputs (`steps.<id>.urls[<n>]`) to its output name in `result.urls`; null when the version has no graph',
      NODE_APP_EXAMPLE.output_key_mapping,
    ),
  },
  { $id: 'NodeApp', additionalProperties: false, description: 'A node app as of one of its versions', examples: [NODE_APP_EXAMPLE] },
);
export type NodeApp = Static<typeof NodeApp>;

export const NodeAppVersionPage = Type.Object(
  { items: Type.Array(NodeAppVersion, { description: 'Versions, newest first' }), next_cursor: Cursor('version creation time') },
  { $id: 'NodeAppVersionPage', description: 'A page of node app versions (spec 2.5)', examples: [{ items: [VERSION_EXAMPLE], next_cursor: null }] },
);
export type NodeAppVersionPage = Static<typeof NodeAppVersionPage>;

const ATTEMPT_EXAMPLE = {
  attempt: 1,
  attempted_at: '2026-11-22T12:00:05.000000Z',
  status: 503,
  error: null,
  duration_ms: 84,
  next_retry_at: '2026-11-22T12:00:10.000000Z',
};

const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: 'The attempt number, from 1', examples: [1] }),
    attempted_at: Type.String({ format: 'date-time', description: 'When the POST was sent', examples: [ATTEMPT_EXAMPLE.attempted_at] }),
    status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null when it gave none", examples: [503] }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why it was not delivered: timeout, connection refused, refused address, ...', examples: ['timeout'] }),
    duration_ms: Type.Integer({ minimum: 0, description: 'How long the attempt took', examples: [84] }),
    next_retry_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the next attempt is due; null after the last', examples: [ATTEMPT_EXAMPLE.next_retry_at] }),
  },
  { description: 'One POST to the receiver' },
);

export const DELIVERY_STATES = ['pending', 'delivered', 'gone', 'refused', 'exhausted'] as const;

const DELIVERY_EXAMPLE = {
  webhook_id: 'msg_2bQ4m8Yb3xVnq1Qk',
  event: 'completed',
  url: 'https://receiver.example/hooks/mediagen',
  state: 'pending',
  created_at: '2026-11-22T12:00:04.250000Z',
  next_attempt_at: '2026-11-22T12:00:10.000000Z',
  attempts: [ATTEMPT_EXAMPLE],
};

export const WebhookDelivery = Type.Object(
  {
    webhook_id: Type.String({ description: 'The webhook-id header, the same on every attempt', examples: [DELIVERY_EXAMPLE.webhook_id] }),
    event: Type.String({ description: 'The status the job reached: completed, failed or cancelled', examples: ['completed'] }),
    url: Type.String({ description: 'The X-Webhook-URL, without user-info', examples: [DELIVERY_EXAMPLE.url] }),
    state: StringEnum(DELIVERY_STATES, { description: 'Where the delivery is', examples: ['delivered'] }),
    created_at: Type.String({ format: 'date-time', description: 'When the job reached its terminal status', examples: [DELIVERY_EXAMPLE.created_at] }),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the next attempt is due, while pending', examples: [DELIVERY_EXAMPLE.next_attempt_at] }),
    attempts: Type.Array(WebhookAttempt, { description: 'Every attempt, oldest first' }),
  },
  { $id: 'WebhookDelivery', description: "A job's webhook delivery", examples: [DELIVERY_EXAMPLE] },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryList = Type.Object(
  { items: Type.Array(WebhookDelivery, { description: "The job's deliveries" }) },
  { $id: 'WebhookDeliveryList', description: "A job's webhook deliveries and their attempts", examples: [{ items: [DELIVERY_EXAMPLE] }] },
);
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>;

const WORKSPACE_DELIVERY_EXAMPLE = { job_id: '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69', ...DELIVERY_EXAMPLE };

/** GET /webhook-deliveries: a delivery of any of the workspace's jobs, with the job's id. */
export const WorkspaceWebhookDelivery = Type.Object(
  {
    job_id: Type.String({ format: 'uuid', description: 'The job whose end the delivery reports (it may have been deleted since)', examples: [WORKSPACE_DELIVERY_EXAMPLE.job_id] }),
    ...WebhookDelivery.properties,
  },
  { $id: 'WorkspaceWebhookDelivery', description: "A webhook delivery of one of the workspace's jobs", examples: [WORKSPACE_DELIVERY_EXAMPLE] },
);
export type WorkspaceWebhookDelivery = Static<typeof WorkspaceWebhookDelivery>;

export const WebhookDeliveryPage = Type.Object(
  { items: Type.Array(WorkspaceWebhookDelivery, { description: 'Deliveries, newest first' }), next_cursor: Cursor('delivery creation time') },
  { $id: 'WebhookDeliveryPage', description: "A page of the workspace's webhook deliveries", examples: [{ items: [WORKSPACE_DELIVERY_EXAMPLE], next_cursor: null }] },
);
export type WebhookDeliveryPage = Static<typeof WebhookDeliveryPage>;
