import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Cursor } from '../common/paging.js';

/**
 * Node apps and their versions as the API shows them (GET /node-apps/{id}, its versions list),
 * declared once: the routes' response schemas (OpenAPI components by `$id`) and, by `Static`, the
 * node-app service's return types.
 */

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
