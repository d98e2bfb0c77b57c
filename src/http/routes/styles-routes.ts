import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { LORA_TRAINING_PATH, BASE_MODELS } from '../../models/style/lora-training.js';
import { StringEnum } from '../../models/schema-kit.js';
import { ShareLink, SharedStyle, Style, StylePage, StylePatchRequest, UnsharedStyle } from '../../services/styles/style-view.js';
import type { Services } from '../../services/services.js';
import { BODY_COMPONENT } from '../openapi/openapi.js';
import { requireAuth } from '../plugins/auth.js';
import { PAGE_LIMIT, PageQuery, pageParams } from '../request/query.js';
import { BalanceBody, CreatedOrWaitedJob, ForbiddenBody, IdempotencyErrors, NoQuery, PreferenceAppliedHeader, ReplayedHeader, errorResponses } from '../openapi/common-schemas.js';
import { creationHandler, headerSchema } from '../request/creation-handler.js';
import type { CreationDeps } from '../request/creation-handler.js';

export interface StyleRouteDeps extends CreationDeps, Pick<Services, 'catalog' | 'styles'> {}

/** A PATCH carries at most 50 preview URLs, data: URIs among them; more than a no-body route's 1 KiB. */
const PATCH_BODY_LIMIT_BYTES = 256 * 1024;

const TAGS = ['styles'];

const IdParam = Type.Object({
  id: Type.String({ description: 'Style identifier (UUID)', examples: ['8d1f3a52-6c0e-4b7a-9f21-3e5d7c9b1a40'] }),
});

const ListQuery = Type.Object({
  ...PageQuery('styles created'),
  ids: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: PAGE_LIMIT.max,
      description: 'Only these style ids: comma-separated, or the parameter repeated (at most 1000)',
      examples: [['8d1f3a52-6c0e-4b7a-9f21-3e5d7c9b1a40']],
    }),
  ),
  model: Type.Optional(StringEnum(BASE_MODELS, { description: 'Only styles trained for this base model', examples: ['flux_dev'] })),
  filter: Type.Optional(
    StringEnum(['all', 'user', 'shared'], {
      default: 'all',
      description: "user: trained with this member's tokens; shared: other members' styles shared with the workspace or public; all: both",
      examples: ['user'],
    }),
  ),
});

const TRAIN_DESCRIPTION =
  'Creates a training job (type `loraTraining`) and answers at once with it pending, like every generation endpoint: ' +
  'X-Webhook-URL, Idempotency-Key, `Prefer: wait`, billing (per training step, by base model) and the concurrency limits apply. When ' +
  'the job completes, its `result` holds `style_id` and the cover image in `urls`. The style is private to the member ' +
  "whose token trained it until shared with the workspace (POST /styles/{id}/share/workspace). qwen and z-image must be " +
  'named in `model` and take no `learning_rate`, `batch_size` or `type: Default`.';

/**
 * POST /styles/train (a job, through the generation use case) and the style management routes
 * (services/styles/styles.ts). Routes only translate; the services check bodies and visibility.
 */
export function registerStyleRoutes(app: FastifyInstance, deps: StyleRouteDeps): void {
  const entry = deps.catalog.get(LORA_TRAINING_PATH);
  if (!entry?.request) throw new Error(`the catalog has no ${LORA_TRAINING_PATH} model`);
  const { styles } = deps;
  app.post(
    entry.route!,
    {
      bodyLimit: deps.bodyLimitBytes,
      config: { stores: 'store new jobs' },
      schema: {
        operationId: 'trainStyle',
        summary: entry.summary,
        description: TRAIN_DESCRIPTION,
        tags: TAGS,
        headers: headerSchema(entry),
        querystring: NoQuery,
        body: entry.request,
        ...(entry.requestName ? { [BODY_COMPONENT]: entry.requestName } : {}),
        response: {
          200: { ...CreatedOrWaitedJob, headers: { ...ReplayedHeader, ...PreferenceAppliedHeader } },
          ...errorResponses(400, 413, 415, 429),
          ...IdempotencyErrors,
          402: BalanceBody,
          403: ForbiddenBody,
        },
      },
      onRequest: async () => {
        deps.generation.available(entry.path, deps.publicUrl());
      },
    },
    creationHandler(entry, deps),
  );

  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get(
    '/styles',
    {
      schema: {
        operationId: 'listStyles',
        summary: 'List the styles this token sees in its workspace, newest first',
        description:
          'Pages of at most `limit` styles, newest first; follow `next_cursor` for older ones (as GET /jobs pages). Lists the ' +
          "workspace's styles this token may use: its member's own and other members' shared with the workspace or public. Another workspace's " +
          'public style is read by its id (GET /styles/{id}).',
        tags: TAGS,
        querystring: ListQuery,
        response: { 200: StylePage, ...errorResponses(400) },
      },
    },
    (request) => {
      const q = request.query;
      return styles.list(
        requireAuth(request.auth),
        {
          ...pageParams(q),
          ...(q.ids ? { ids: q.ids } : {}),
          ...(q.model ? { model: q.model } : {}),
          filter: q.filter ?? 'all',
        },
        deps.publicUrl(),
      );
    },
  );

  typed.get(
    '/styles/:id',
    {
      schema: {
        operationId: 'getStyle',
        summary: 'Get a style',
        description: "A style this token may see: its member's own, one shared with the workspace, or a public one of any workspace; any other is 404.",
        tags: TAGS,
        params: IdParam,
        querystring: NoQuery,
        response: { 200: Style, ...errorResponses(400, 404) },
      },
    },
    (request) => styles.get(requireAuth(request.auth), request.params.id, deps.publicUrl()),
  );

  typed.patch(
    '/styles/:id',
    {
      bodyLimit: PATCH_BODY_LIMIT_BYTES,
      schema: {
        operationId: 'updateStyle',
        summary: 'Change a style: title, public, urls, cover_url',
        description:
          'Changes the fields given; a body with none of them (or only `public: null`) is 400. Only the member whose token ' +
          'trained the style may change it (403 for other tokens that see it, 404 for those that do not).',
        tags: TAGS,
        params: IdParam,
        querystring: NoQuery,
        body: StylePatchRequest,
        [BODY_COMPONENT]: 'StylePatchRequest',
        response: { 200: Style, ...errorResponses(400, 403, 404, 413, 415) },
      },
    },
    (request) => styles.update(requireAuth(request.auth), request.params.id, request.body, deps.publicUrl()),
  );

  typed.get(
    '/styles/:id/share/link',
    {
      schema: {
        operationId: 'getStyleShareLink',
        summary: "Get a style's shareable link",
        description:
          "The style's URL. It grants nothing by itself: whoever opens it sees the style if they may (its workspace once shared, " +
          'everyone once public). 201 the first time it is asked for, 200 after. Only the member whose token trained the style.',
        tags: TAGS,
        params: IdParam,
        querystring: NoQuery,
        response: {
          200: { ...ShareLink, description: 'The link, asked for before' },
          201: { ...ShareLink, description: 'The link, asked for the first time' },
          ...errorResponses(400, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const link = await styles.shareLink(requireAuth(request.auth), request.params.id, deps.publicUrl());
      return reply.code(link.is_new ? 201 : 200).send(link);
    },
  );

  typed.post(
    '/styles/:id/share/workspace',
    {
      config: { stores: 'share styles' },
      schema: {
        operationId: 'shareStyleWithWorkspace',
        summary: 'Share a style with the workspace',
        description: "Every token of the workspace may then see and use it. Only the member whose token trained it; sharing it again changes nothing.",
        tags: TAGS,
        params: IdParam,
        querystring: NoQuery,
        response: { 200: SharedStyle, ...errorResponses(400, 403, 404) },
      },
    },
    (request) => styles.shareWithWorkspace(requireAuth(request.auth), request.params.id),
  );

  typed.delete(
    '/styles/:id/share/workspace',
    {
      schema: {
        operationId: 'unshareStyleFromWorkspace',
        summary: 'Stop sharing a style with the workspace',
        description:
          "Only its trainer's tokens see it again (and everyone, if it is public); jobs already created with it are unaffected. " +
          'Only the member whose token trained it; 404 when it is not shared.',
        tags: TAGS,
        params: IdParam,
        querystring: NoQuery,
        response: { 200: UnsharedStyle, ...errorResponses(400, 403, 404) },
      },
    },
    (request) => styles.unshareFromWorkspace(requireAuth(request.auth), request.params.id),
  );
}
