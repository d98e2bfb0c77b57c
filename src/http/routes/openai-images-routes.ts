import multipart from '@fastify/multipart';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { tooLargeUpload } from '../../services/assets/asset-rules.js';
import type { GenerationOptions } from '../../services/jobs/generation.js';
import type { OpenAiDoor } from '../../services/openai/openai-door.js';
import type { EditUploads } from '../../services/openai/openai-edits.js';
import { MAX_EDIT_IMAGES } from '../../services/openai/openai-edits.js';
import { paramError } from '../../services/openai/openai-fields.js';
import type { ImagesAnswer } from '../../services/openai/openai-images.js';
import { MAX_PROMPT_CHARS, readImageRequest } from '../../services/openai/openai-image-request.js';
import { requireAuth } from '../plugins/auth.js';
import { OPENAI_TAG, openAiErrorResponses } from '../plugins/openai-errors.js';
import { DeprecationHeaders, NoQuery, ReplayedHeader } from '../openapi/common-schemas.js';
import { headerSchema } from '../request/creation-handler.js';
import type { CreationDeps } from '../request/creation-handler.js';
import { deprecationHeaders } from '../request/deprecation-headers.js';
import { OPTION_LABELS, idempotencyKeyFrom, tagsFrom, webhookUrlFrom, zeroDataRetentionFrom } from '../request/request-headers.js';
import { ImageEditForm, ImageGenerationBody, ImagesResponse } from './openai-images-schemas.js';

export interface OpenAiImagesDeps extends Omit<CreationDeps, 'generation'> {
  readonly door: OpenAiDoor;
}

/** Room for the form's framing and text fields around the files. */
const FORM_OVERHEAD_BYTES = 256 * 1024;

const DESCRIPTION =
  "OpenAI's synchronous answer over native jobs: the request is mapped onto the model's own body (docs/openai.md), created as " +
  'POST /generate/{model} creates it (same token, balance, limits, billing; X-Webhook-URL, Idempotency-Key and X-Mediagen-Tags work), and answered ' +
  'when its job(s) end, at most `openai.wait_seconds` (300 s) later. `n` images are `n` jobs unless the model has a count field.';

/** What the creation is given beside the body: the native headers, read as the native routes read them. */
function optionsFrom(request: FastifyRequest): GenerationOptions {
  const headers = request.raw.rawHeaders;
  return {
    webhookUrl: webhookUrlFrom(headers),
    // Whether the model offers it is the use case's to say, once the model is known.
    zeroDataRetention: zeroDataRetentionFrom(headers, true),
    idempotencyKey: idempotencyKeyFrom(headers),
    requestId: request.id,
    tags: tagsFrom(headers),
  };
}

async function answered(reply: FastifyReply, deps: OpenAiImagesDeps, run: (signal: AbortSignal) => Promise<ImagesAnswer>) {
  // The wait ends early when the client leaves or the server closes (the jobs go on).
  const held = deps.held.hold(reply);
  try {
    const answer = await run(held.signal);
    if (answer.entry.deprecation) reply.headers(deprecationHeaders(answer.entry.deprecation, deps.publicUrl()));
    if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
    return answer.response;
  } finally {
    held.release();
  }
}

const policyOf = (deps: OpenAiImagesDeps) => ({ allowPrivateUrls: deps.allowPrivateUrls, publicUrl: deps.publicUrl(), labels: OPTION_LABELS });

const responses = {
  200: { ...ImagesResponse, headers: { ...ReplayedHeader, ...DeprecationHeaders } },
  ...openAiErrorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503, 504),
};

/** The multipart plugin's and busboy's errors as refusals naming what is wrong; anything else unchanged. */
function formError(err: unknown, maxBytes: number): unknown {
  if (err instanceof DomainError || !(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLargeUpload(maxBytes);
  if (code === 'FST_FILES_LIMIT') return paramError('image', `at most ${MAX_EDIT_IMAGES} images and a mask per edit`);
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return invalid('the form has too many parts');
  if (code === 'FST_PROTO_VIOLATION') return invalid('the form has a field name that is not allowed');
  if (code === 'FST_MP_PREMATURE_CLOSE') return invalid('the upload ended before the form was complete');
  if (err.constructor === Error && code === undefined && !('errno' in err)) return invalid(`the multipart form could not be read: ${err.message}`);
  return err;
}

/** Reads the edit's form: files staged as they stream in, text fields kept; a repeated field is refused. */
async function readEditForm(request: FastifyRequest, deps: OpenAiImagesDeps, signal: AbortSignal): Promise<{ fields: Record<string, string>; uploads: EditUploads }> {
  const caller = requireAuth(request.auth);
  const assets = deps.door.assets;
  const fields: Record<string, string> = {};
  const images: { staged: EditUploads['images'][number]['staged']; filename?: string }[] = [];
  let mask: EditUploads['mask'];
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const file = part as MultipartFile;
        const isImage = file.fieldname === 'image' || file.fieldname === 'image[]';
        if (!isImage && !(file.fieldname === 'mask' && !mask)) {
          file.file.resume();
          throw paramError(file.fieldname.slice(0, 100), file.fieldname === 'mask' ? 'send one mask' : `the form has an unknown file '${file.fieldname.slice(0, 100)}'; send image (or image[]) and, optionally, mask`);
        }
        const staged = await assets.stage(caller, file.file, signal);
        const entry = { staged, ...(file.filename ? { filename: file.filename } : {}) };
        if (isImage) images.push(entry);
        else mask = entry;
        if (file.file.truncated) throw tooLargeUpload(assets.policy.maxBytes);
      } else {
        const name = part.fieldname;
        if (name === 'image' || name === 'image[]' || name === 'mask') throw paramError(name, `send ${name} as a file, not a text field (OpenAI's edits take uploads, never URLs)`);
        if (Object.hasOwn(fields, name)) throw paramError(name.slice(0, 100), `the form has '${name.slice(0, 100)}' twice`);
        fields[name] = String((part as MultipartValue).value);
      }
    }
  } catch (err) {
    for (const u of [...images, ...(mask ? [mask] : [])]) await u.staged.discard().catch(() => undefined);
    throw formError(err, assets.policy.maxBytes);
  }
  return { fields, uploads: { images, ...(mask ? { mask } : {}) } };
}

/** POST /v1/images/generations and POST /v1/images/edits (OpenAI's Images API). */
export function registerOpenAiImageRoutes(app: FastifyInstance, deps: OpenAiImagesDeps): void {
  app.post(
    '/images/generations',
    {
      bodyLimit: Math.max(deps.bodyLimitBytes, MAX_PROMPT_CHARS * 4 + 4096),
      schema: {
        operationId: 'openaiCreateImage',
        summary: "Create images (OpenAI's POST /v1/images/generations)",
        description: DESCRIPTION,
        tags: [OPENAI_TAG],
        headers: headerSchema({ zeroDataRetention: true }),
        querystring: NoQuery,
        body: ImageGenerationBody,
        response: responses,
      },
    },
    async (request, reply) => {
      const caller = requireAuth(request.auth);
      const options = optionsFrom(request);
      const req = readImageRequest(request.body, 'generations');
      return answered(reply, deps, (signal) => deps.door.images.create(caller, req, options, policyOf(deps), signal));
    },
  );

  const maxBytes = deps.door.assets.policy.maxBytes;
  // Multipart only here: every other /v1 route takes JSON or nothing.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    await scope.register(multipart, {
      limits: { fileSize: maxBytes + 1, files: MAX_EDIT_IMAGES + 1, fields: 20, parts: MAX_EDIT_IMAGES + 21, fieldSize: MAX_PROMPT_CHARS * 4 + 4, headerPairs: 100 },
    });
    scope.post(
      '/images/edits',
      {
        config: { stores: 'store new uploads' },
        bodyLimit: (MAX_EDIT_IMAGES + 1) * maxBytes + FORM_OVERHEAD_BYTES,
        onRequest: async (request) => {
          if (!/^multipart\/form-data\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
            throw new DomainError('unsupported_media_type', 'send the edit as Content-Type: multipart/form-data with the image file(s) in image (or image[])');
          }
        },
        schema: {
          operationId: 'openaiEditImage',
          summary: "Edit images (OpenAI's POST /v1/images/edits)",
          description: `${DESCRIPTION} The uploaded image(s) and mask become assets of the workspace (GET /assets) and go to the model's image input(s); a model without a mask input refuses a mask (400, param mask).`,
          tags: [OPENAI_TAG],
          consumes: ['multipart/form-data'],
          headers: headerSchema({ zeroDataRetention: true }),
          querystring: NoQuery,
          body: ImageEditForm,
          response: responses,
        },
      },
      async (request, reply) => {
        const caller = requireAuth(request.auth);
        const options = optionsFrom(request);
        return answered(reply, deps, async (signal) => {
          const { fields, uploads } = await readEditForm(request, deps, signal);
          return deps.door.edits.create(caller, fields, uploads, options, policyOf(deps), signal);
        });
      },
    );
  });
}
