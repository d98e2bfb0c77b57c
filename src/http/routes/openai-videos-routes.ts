import multipart from '@fastify/multipart';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { WEBHOOK_URL_MAX } from '../../domain/webhook-url.js';
import { tooLargeUpload } from '../../services/assets/asset-rules.js';
import type { AssetService, StagedUpload } from '../../services/assets/assets.js';
import { paramError } from '../../services/openai/openai-fields.js';
import { DeletedOpenAiVideo, OpenAiVideo, OpenAiVideoList } from '../../services/openai/openai-video-view.js';
import { VIDEO_LIST_DEFAULT, VIDEO_LIST_MAX } from '../../services/openai/openai-videos.js';
import type { OpenAiVideos, VideoCreateRequest } from '../../services/openai/openai-videos.js';
import { StringEnum } from '../../models/schema-kit.js';
import { IdempotencyKeyHeader, ReplayedHeader, TagsHeader, errorResponses } from '../openapi/common-schemas.js';
import { OPENAI_TAG, openAiErrorResponses } from '../plugins/openai-errors.js';
import { requireAuth } from '../plugins/auth.js';
import { OPTION_LABELS, WEBHOOK_URL_PATTERN, idempotencyKeyFrom, tagsFrom, webhookUrlFrom } from '../request/request-headers.js';

/** Room for the form around the image: boundaries, part headers, the prompt and the other fields. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
/** The longest text field a form may carry (a prompt); past it the field arrives cut, and is refused. */
const FORM_FIELD_BYTES = 32 * 1024;
const FORM_FIELDS = ['model', 'prompt', 'seconds', 'size'] as const;

export interface OpenAiVideoRouteDeps {
  readonly videos: OpenAiVideos;
  /** Where the input_reference upload is staged; its size limit is the asset upload's. */
  readonly assets: Pick<AssetService, 'stage' | 'policy'>;
  readonly publicUrl: () => string;
  readonly allowPrivateUrls: boolean;
  /** The largest JSON body (`body_limit_bytes`). */
  readonly bodyLimitBytes: number;
}

const IdParam = Type.Object({ video_id: Type.String({ description: 'The video id (the native job id)', examples: ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'] }) });

const CreateBody = Type.Object(
  {
    prompt: Type.String({ description: 'What the video shows', examples: ['A paper boat drifting across a pond'] }),
    model: Type.Optional(Type.String({ description: 'A video model path of GET /v1/models or an alias of the config; absent: openai.default_video_model', examples: ['video/vendor-d/model-d-fast'] })),
    seconds: Type.Optional(Type.String({ description: "The clip's length, to the model's duration field (a value it allows)", examples: ['4'] })),
    size: Type.Optional(Type.String({ description: 'WxH, to the model\'s width/height or its nearest aspect ratio and resolution', examples: ['1280x720'] })),
    input_reference: Type.Optional(Type.String({ format: 'binary', description: "multipart only: an image file for the model's image input (its first frame), stored as an asset" })),
  },
  { description: 'JSON, or multipart/form-data with an input_reference file' },
);

const CreateHeaders = Type.Object({
  'x-webhook-url': Type.Optional(Type.String({ format: 'uri', pattern: WEBHOOK_URL_PATTERN, maxLength: WEBHOOK_URL_MAX, description: 'Receives a POST when the job ends, as on POST /generate/{path}' })),
  'idempotency-key': Type.Optional(IdempotencyKeyHeader),
  'x-mediagen-tags': Type.Optional(TagsHeader),
});

/**
 * OpenAI-shaped error answers, declared by each route (the native ones the app adds to every route
 * are the native shape), with Retry-After where the server sends it, as the native routes declare it.
 */
function v1Errors(...statuses: number[]): Record<number, unknown> {
  const retryAfter = errorResponses(503)[503]!.headers!;
  const declared = openAiErrorResponses(...statuses, 401, 403, 503) as Record<number, object>;
  for (const s of [409, 429, 503]) if (declared[s]) declared[s] = { ...declared[s], headers: retryAfter };
  return declared;
}

const isForm = (contentType: string | undefined) => /^multipart\/form-data\s*(;|$)/i.test(contentType ?? '');

/** Aborts when the client goes away before the answer: an upload or a thumbnail stops with it. */
function abortedOnHangUp(reply: FastifyReply): AbortSignal {
  const hangUp = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) hangUp.abort(new Error('the client closed the connection'));
  });
  return hangUp.signal;
}

/** The multipart plugin's refusals in the catalogue's words; anything else unchanged. */
function formError(err: unknown, maxBytes: number): unknown {
  if (err instanceof DomainError || !(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLargeUpload(maxBytes);
  if (code === 'FST_FILES_LIMIT') return paramError('input_reference', 'send one input_reference file');
  if (typeof code === 'string' && code.startsWith('FST_')) return invalid(`the multipart form could not be read (${code})`);
  // busboy's parse errors are plain Errors without a code ("Unexpected end of form").
  if (err.constructor === Error && code === undefined && !('errno' in err)) return invalid(`the multipart form could not be read: ${err.message}`);
  return err;
}

/** The form's fields and its input_reference file, staged as it arrives; anything else is refused, naming it. */
async function readForm(request: FastifyRequest, deps: OpenAiVideoRouteDeps, signal: AbortSignal): Promise<VideoCreateRequest> {
  const auth = requireAuth(request.auth);
  const fields: Record<string, string> = {};
  let upload: { staged: StagedUpload; filename?: string } | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const file = part as MultipartFile;
        if (part.fieldname !== 'input_reference' || upload) {
          file.file.resume();
          throw paramError(part.fieldname.slice(0, 100), part.fieldname === 'input_reference' ? 'send one input_reference file' : `unknown file field '${part.fieldname.slice(0, 100)}'; the file goes in input_reference`);
        }
        upload = { staged: await deps.assets.stage(auth, file.file, signal), ...(file.filename ? { filename: file.filename } : {}) };
        if (file.file.truncated) throw tooLargeUpload(deps.assets.policy.maxBytes);
        continue;
      }
      const name = part.fieldname;
      const value = String((part as MultipartValue).value);
      if (name === 'input_reference' || name.startsWith('input_reference[')) {
        throw paramError('input_reference', 'input_reference must be an image file sent as a file part; a file_id or an image_url is not taken here');
      }
      if (!(FORM_FIELDS as readonly string[]).includes(name)) throw paramError(name.slice(0, 100), `unknown field '${name.slice(0, 100)}'; the fields are ${FORM_FIELDS.join(', ')} and input_reference`);
      if (name in fields) throw paramError(name, `the form has '${name}' twice`);
      if ((part as MultipartValue).valueTruncated) throw paramError(name, `${name} is longer than ${FORM_FIELD_BYTES} bytes`);
      fields[name] = value;
    }
  } catch (err) {
    await upload?.staged.discard().catch(() => undefined);
    throw formError(err, deps.assets.policy.maxBytes);
  }
  return { ...fields, ...(upload ? { inputReference: upload } : {}) };
}

/** A JSON body: an object with OpenAI's fields and nothing else (input_reference as a file only). */
function readJson(body: unknown): VideoCreateRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('the body must be a JSON object with prompt and, optionally, model, seconds and size');
  const fields = body as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (name === 'input_reference') throw paramError('input_reference', 'send input_reference as an image file in a multipart/form-data request; a file_id or an image_url is not taken here');
    if (!(FORM_FIELDS as readonly string[]).includes(name)) throw paramError(name.slice(0, 100), `unknown field '${name.slice(0, 100)}'; the fields are ${FORM_FIELDS.join(', ')} and input_reference`);
  }
  const model = fields.model;
  if (model !== undefined && model !== null && typeof model !== 'string') throw paramError('model', 'model must be a string');
  return { model: (model ?? undefined) as string | undefined, prompt: fields.prompt, seconds: fields.seconds, size: fields.size };
}

/**
 * OpenAI's Videos API under /v1 (docs/openai.md#videos), registered in the /v1 scope whose errors
 * are OpenAI's (plugins/openai-errors.ts). The routes only translate; services/openai/openai-videos.ts decides.
 */
export async function registerOpenAiVideoRoutes(scope: FastifyInstance, deps: OpenAiVideoRouteDeps): Promise<void> {
  const maxForm = deps.assets.policy.maxBytes + FORM_OVERHEAD_BYTES;
  await scope.register(async (forms) => {
    // JSON (the parent's parser) or a form: the SDK sends a form whether or not a file is in it.
    await forms.register(multipart, {
      limits: { fileSize: deps.assets.policy.maxBytes + 1, files: 1, fields: 8, parts: 10, fieldSize: FORM_FIELD_BYTES, headerPairs: 100 },
    });
    forms.withTypeProvider<TypeBoxTypeProvider>().post(
      '/videos',
      {
        bodyLimit: deps.bodyLimitBytes,
        config: { stores: 'create video jobs' },
        onRequest: async (request) => {
          if (isForm(request.headers['content-type']) && Number(request.headers['content-length'] ?? NaN) > maxForm) throw tooLargeUpload(deps.assets.policy.maxBytes);
        },
        schema: {
          operationId: 'openaiCreateVideo',
          summary: 'Create a video job (OpenAI Videos API)',
          description:
            "OpenAI's `POST /v1/videos` over a native video job: answers at once with the video `queued`; poll GET /v1/videos/{video_id}. " +
            '`seconds` and `size` map onto the model by the rule of docs/openai.md; a field the model cannot honour is a 400 naming it. ' +
            'Tokens, balance, limits, X-Webhook-URL, Idempotency-Key, X-Mediagen-Tags and billing are those of POST /generate/{path}.',
          tags: [OPENAI_TAG],
          consumes: ['application/json', 'multipart/form-data'],
          headers: CreateHeaders,
          body: CreateBody,
          response: { 200: { ...OpenAiVideo, headers: ReplayedHeader }, ...v1Errors(400, 404, 409, 413, 415, 422, 429) },
        },
      },
      async (request, reply) => {
        const caller = requireAuth(request.auth);
        const headers = request.raw.rawHeaders;
        const options = { webhookUrl: webhookUrlFrom(headers), zeroDataRetention: false, idempotencyKey: idempotencyKeyFrom(headers), requestId: request.id, tags: tagsFrom(headers) };
        const signal = abortedOnHangUp(reply);
        const req = request.isMultipart() ? await readForm(request, deps, signal) : readJson(request.body);
        const policy = { allowPrivateUrls: deps.allowPrivateUrls, publicUrl: deps.publicUrl(), labels: OPTION_LABELS };
        const { video, replayed } = await deps.videos.create(caller, req, options, policy, signal);
        if (replayed) void reply.header('Idempotent-Replayed', 'true');
        return video;
      },
    );
  });

  const typed = scope.withTypeProvider<TypeBoxTypeProvider>();
  typed.get(
    '/videos',
    {
      schema: {
        operationId: 'openaiListVideos',
        summary: 'List video jobs (OpenAI Videos API)',
        description: "The caller's video jobs, newest first (`order=asc`: oldest first); pass a page's `last_id` as `after` for the next.",
        tags: [OPENAI_TAG],
        querystring: Type.Object({
          after: Type.Optional(Type.String({ description: 'The last_id of the previous page', examples: ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'] })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: VIDEO_LIST_MAX, default: VIDEO_LIST_DEFAULT, description: 'Page size', examples: [20] })),
          order: Type.Optional(StringEnum(['asc', 'desc'], { default: 'desc', description: 'By creation time: desc newest first, asc oldest first', examples: ['asc'] })),
        }),
        response: { 200: OpenAiVideoList, ...v1Errors(400) },
      },
    },
    (request) => deps.videos.list(requireAuth(request.auth), request.query),
  );

  typed.get(
    '/videos/:video_id',
    {
      schema: {
        operationId: 'openaiRetrieveVideo',
        summary: 'Get a video job (OpenAI Videos API)',
        description: 'The video in its current state: poll it until `completed` or `failed`. An unknown id, or a job that is not a video, is a 404.',
        tags: [OPENAI_TAG],
        params: IdParam,
        response: { 200: OpenAiVideo, ...v1Errors(404) },
      },
    },
    (request) => deps.videos.get(requireAuth(request.auth), request.params.video_id),
  );

  typed.delete(
    '/videos/:video_id',
    {
      schema: {
        operationId: 'openaiDeleteVideo',
        summary: 'Delete a video job and its files (OpenAI Videos API)',
        description: 'As DELETE /jobs/{id}: a job still running is cancelled first (its hold released, its webhook sent), then deleted.',
        tags: [OPENAI_TAG],
        params: IdParam,
        response: { 200: DeletedOpenAiVideo, ...v1Errors(404) },
      },
    },
    (request) => deps.videos.delete(requireAuth(request.auth), request.params.video_id, request.log),
  );

  typed.get(
    '/videos/:video_id/content',
    {
      schema: {
        operationId: 'openaiDownloadVideoContent',
        summary: "Download a completed video's MP4, or its thumbnail (OpenAI Videos API)",
        description: '`variant=video` (default): the file as the job made it (video/mp4). `variant=thumbnail`: its first frame as WebP. `spritesheet` is not offered (400).',
        tags: [OPENAI_TAG],
        params: IdParam,
        querystring: Type.Object({
          variant: Type.Optional(StringEnum(['video', 'thumbnail', 'spritesheet'], { default: 'video', description: 'video: the file; thumbnail: its first frame as WebP; spritesheet: not offered', examples: ['thumbnail'] })),
        }),
        response: {
          200: {
            description: 'The video (video/mp4) or the thumbnail (image/webp)',
            content: {
              'video/mp4': { schema: { type: 'string', format: 'binary', description: 'The MP4' }, example: '<the bytes of the MP4>' },
              'image/webp': { schema: { type: 'string', format: 'binary', description: 'The first frame' }, example: '<the bytes of the WebP>' },
            },
          },
          ...v1Errors(400, 404, 410),
        },
      },
    },
    async (request, reply) => {
      const variant = request.query.variant ?? 'video';
      const content = await deps.videos.content(requireAuth(request.auth), request.params.video_id, variant, abortedOnHangUp(reply));
      return reply.type(content.contentType).header('content-length', content.size).header('cache-control', 'private, no-store').send(content.body);
    },
  );
}
