import multipart from '@fastify/multipart';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { ASSET_FILES_PATH } from '../../services/assets/asset-urls.js';
import { Asset, AssetPage, DeletedAsset } from '../../services/assets/asset-view.js';
import { MAX_DESCRIPTION_CHARS, tooLargeUpload } from '../../services/assets/asset-rules.js';
import type { AssetService, StagedUpload } from '../../services/assets/assets.js';
import type { OutputStore } from '../../outputs/output-store.js';
import { requireAuth } from '../plugins/auth.js';
import { PageQuery, pageParams } from '../request/query.js';
import { idempotencyKeyFrom } from '../request/request-headers.js';
import { AssetTooLarge, IdempotencyErrors, IdempotencyKeyHeader, NoQuery, ReplayedHeader, errorResponses } from '../openapi/common-schemas.js';
import { registerServedFiles } from './outputs-routes.js';

/** Room for the multipart framing around the file: boundaries, part headers, the description. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

const IdParam = Type.Object({
  id: Type.String({ description: 'Asset identifier (UUID)', examples: ['3c90c3cc-0d44-4b50-8888-8dd25736052a'] }),
});

const UploadForm = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'The file: JPEG, PNG, WebP, HEIC, MP4, MOV, WebM, GLB, WAV or MP3 (known by its bytes)', examples: ['<the bytes of product.png>'] }),
    description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION_CHARS, description: 'What the file shows, for you', examples: ['Product shot, front'] })),
  },
  { description: 'multipart/form-data with one file', examples: [{ file: '<the bytes of product.png>', description: 'Product shot, front' }] },
);


const formMessages: Readonly<Record<string, string>> = {
  FST_PARTS_LIMIT: 'the form has too many parts; send one file and at most a description',
  FST_FILES_LIMIT: 'the form has more than one file; send one file per request',
  FST_FIELDS_LIMIT: 'the form has too many fields; send one file and at most a description',
  FST_PROTO_VIOLATION: 'the form has a field name that is not allowed',
  FST_MP_PREMATURE_CLOSE: 'the upload ended before the form was complete',
};

/**
 * The multipart plugin's and busboy's errors, as the catalogue's; anything else (a store or disk
 * fault, a bug) unchanged, for the error handler to answer 503 or 500.
 */
function formError(err: unknown, maxBytes: number): unknown {
  if (err instanceof DomainError || !(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLargeUpload(maxBytes);
  const message = typeof code === 'string' ? formMessages[code] : undefined;
  if (message) return invalid(message);
  // busboy's parse errors are plain Errors without a code: "Unexpected end of form",
  // "Malformed part header". Store, system and programming errors all differ in one of those.
  if (err.constructor === Error && code === undefined && !('errno' in err)) return invalid(`the multipart form could not be read: ${err.message}`);
  return err;
}

/** multipart/form-data, whatever its parameters; anything else is refused before the body is read. */
const isForm = (contentType: string | undefined) => /^multipart\/form-data\s*(;|$)/i.test(contentType ?? '');

/** Aborts when the client goes away before the answer is sent: the upload's work stops with it. */
function abortedOnHangUp(reply: FastifyReply): AbortSignal {
  const hangUp = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) hangUp.abort(new Error('the client closed the connection'));
  });
  return hangUp.signal;
}

/**
 * Reads the form: the file is staged as it arrives (never buffered); the description may come
 * before or after it. Anything else in the form is refused, naming it.
 */
async function readUpload(request: FastifyRequest, assets: AssetService, signal: AbortSignal): Promise<{ staged: StagedUpload; description?: string; filename?: string }> {
  const auth = requireAuth(request.auth);
  let staged: StagedUpload | undefined;
  let description: string | undefined;
  let filename: string | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file' && part.fieldname === 'file' && !staged) {
        const file = part as MultipartFile;
        filename = file.filename || undefined;
        staged = await assets.stage(auth, file.file, signal);
        if (file.file.truncated) throw tooLargeUpload(assets.policy.maxBytes);
      } else if (part.type === 'field' && part.fieldname === 'description' && description === undefined) {
        // A value cut at the field size limit is still longer than the service takes: it refuses it.
        description = String((part as MultipartValue).value);
      } else {
        if (part.type === 'file') part.file.resume();
        const what = part.type === 'file' ? 'file' : 'field';
        throw invalid(
          part.fieldname === 'file' || part.fieldname === 'description'
            ? `the form has '${part.fieldname}' twice${part.type === 'field' && part.fieldname === 'file' ? ' or as a plain field; send the file as a file part' : ''}`
            : `the form has an unknown ${what} '${part.fieldname.slice(0, 100)}'; send file and, optionally, description`,
        );
      }
    }
  } catch (err) {
    await staged?.discard().catch(() => undefined);
    throw formError(err, assets.policy.maxBytes);
  }
  if (!staged) throw invalid("the form has no file; send it in a field named 'file'");
  return { staged, ...(description !== undefined ? { description } : {}), ...(filename !== undefined ? { filename } : {}) };
}

export function registerAssetRoutes(app: FastifyInstance, assets: AssetService, outputs: OutputStore, publicUrl: () => string): void {
  const maxBytes = assets.policy.maxBytes;
  // Assets' files, served while the asset lives.
  registerServedFiles(app, {
    path: ASSET_FILES_PATH,
    outputs,
    served: (key, name) => assets.fileServed(key, name),
    missing: 'no such asset file; the asset may have been deleted',
    // A browser asks again each time (a 304 while it lives), so a DELETE takes effect there too.
    cacheControl: 'private, no-cache',
  });

  // Multipart only here, and nothing else here: every other route takes JSON or nothing.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    await scope.register(multipart, {
      // fileSize one byte over the limit, so the service's own count sees the excess and refuses
      // it; fieldSize past what the longest description can take in UTF-8, so a cut one is too long.
      limits: { fileSize: maxBytes + 1, files: 1, fields: 4, parts: 6, fieldSize: MAX_DESCRIPTION_CHARS * 4 + 4, headerPairs: 100 },
    });
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/assets',
      {
        config: { stores: 'store new uploads' },
        // A form is not JSON: the multipart parser reads the stream; no body limit of its own.
        bodyLimit: maxBytes + FORM_OVERHEAD_BYTES,
        // Another body type, or a Content-Length past the limit, is refused before a byte of the
        // body is read.
        onRequest: async (request) => {
          if (!isForm(request.headers['content-type'])) {
            throw new DomainError('unsupported_media_type', 'send the upload as Content-Type: multipart/form-data with the file in a field named file');
          }
          const length = Number(request.headers['content-length'] ?? NaN);
          if (length > maxBytes + FORM_OVERHEAD_BYTES) throw tooLargeUpload(maxBytes);
        },
        schema: {
          operationId: 'uploadAsset',
          summary: 'Upload a file to use as an input',
          description:
            'multipart/form-data with the file in `file` and an optional `description`. The kind is read from the bytes. Use the returned `image_url` in any URL field of a generation request.',
          tags: ['assets'],
          consumes: ['multipart/form-data'],
          headers: Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKeyHeader) }),
          body: UploadForm,
          querystring: NoQuery,
          response: { 200: { ...Asset, headers: ReplayedHeader }, ...errorResponses(400), 413: AssetTooLarge, ...errorResponses(415, 503), ...IdempotencyErrors },
        },
      },
      async (request, reply) => {
        // A malformed key is refused before the upload is read.
        const idempotencyKey = idempotencyKeyFrom(request.raw.rawHeaders);
        const signal = abortedOnHangUp(reply);
        const { staged, description, filename } = await readUpload(request, assets, signal);
        const committed = await assets.commit(requireAuth(request.auth), staged, { description, filename, idempotencyKey }, publicUrl(), signal);
        if (committed.replayed) reply.header('Idempotent-Replayed', 'true');
        return committed.asset;
      },
    );
  });

  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get(
    '/assets',
    {
      schema: {
        operationId: 'listAssets',
        summary: "List the workspace's assets, newest first",
        description: 'Pages of at most `limit` assets, newest first; follow `next_cursor` for older ones (as GET /jobs pages).',
        tags: ['assets'],
        querystring: Type.Object({
          ...PageQuery('assets uploaded'),
        }),
        response: { 200: AssetPage, ...errorResponses(400) },
      },
    },
    (request) =>
      assets.list(requireAuth(request.auth), pageParams(request.query), publicUrl()),
  );

  typed.get(
    '/assets/:id',
    {
      schema: {
        operationId: 'getAsset',
        summary: 'Get an asset',
        description: "One of the workspace's assets; another workspace's is 404.",
        tags: ['assets'],
        params: IdParam,
        querystring: NoQuery,
        response: { 200: Asset, ...errorResponses(400, 404) },
      },
    },
    (request) => assets.get(requireAuth(request.auth), request.params.id, publicUrl()),
  );

  typed.delete(
    '/assets/:id',
    {
      schema: {
        operationId: 'deleteAsset',
        summary: 'Delete an asset; its URL stops being served at once',
        description: 'Jobs already created from it are unaffected: they still read its file.',
        tags: ['assets'],
        params: IdParam,
        querystring: NoQuery,
        response: { 200: DeletedAsset, ...errorResponses(400, 404) },
      },
    },
    (request) => assets.delete(requireAuth(request.auth), request.params.id, request.log),
  );
}
