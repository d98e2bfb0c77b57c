import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RemoteProtocol } from '../../services/remote/remote-protocol.js';
import { REMOTE_PATH_PREFIX } from '../../services/remote/remote-constants.js';
import { tooLargeOutput } from '../../services/remote/remote-upload.js';
import {
  ClaimAnswer,
  ClaimRequest,
  CompleteAnswer,
  CompleteRequest,
  FailAnswer,
  FailRequest,
  ProgressAnswer,
  ProgressRequest,
  UploadAnswer,
} from '../../services/remote/remote-views.js';
import type { HeldRequests } from '../request/held-requests.js';
import { BODY_COMPONENT, WORKER_SECURITY } from '../openapi/openapi.js';
import { requireWorker } from '../plugins/remote-auth.js';
import { NoQuery, errorResponses } from '../openapi/common-schemas.js';
import { WorkerErrors, workerBody } from '../openapi/remote-schemas.js';

const TAGS = ['workers'];

const JobParam = Type.Object({ id: Type.String({ description: 'The job (its `id` in the claim)', examples: ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'] }) });

/** Bodies of the JSON calls; a completion may carry a style artifact of 64 KiB, escapes and all. */
const CLAIM_BODY_BYTES = 16 * 1024;
// A progress call may carry an engine's state (16 KiB of JSON at most), escapes and all.
const PROGRESS_BODY_BYTES = 48 * 1024;
const COMPLETE_BODY_BYTES = 512 * 1024;
const FAIL_BODY_BYTES = 8 * 1024;

/** Aborts when the client goes away before its answer is sent. */
function hangUp(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort(new Error('the client closed the connection'));
  });
  return gone.signal;
}

/**
 * The worker protocol (docs/workers.md) under REMOTE_PATH_PREFIX (/worker/v1): remote GPU workers claim jobs of the
 * models bound to `remote:<pool>`, report progress, upload outputs and complete or fail them,
 * authenticated with a worker token (never an API token). Routes only translate; the use cases
 * (services/remote-*.ts) check bodies, tokens, leases and deadlines.
 */
export function registerWorkerRoutes(app: FastifyInstance, remote: RemoteProtocol, publicUrl: () => string, waits: HeldRequests): void {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  // progress, complete and fail store no files: they go on while the data dir cannot take writes,
  // so a worker can still end what it holds. A claim is refused then (503), as in-process workers stop claiming.
  const held = { worker: true, storesInside: true } as const;

  typed.post(
    `${REMOTE_PATH_PREFIX}/claim`,
    {
      bodyLimit: CLAIM_BODY_BYTES,
      config: { worker: true, stores: 'hand out jobs' },
      schema: {
        operationId: 'workerClaim',
        summary: 'Claim jobs (long poll)',
        description:
          'Takes up to `max` queued jobs of the remote-bound models this worker token names (narrowed by `models` and `pool`), ' +
          'waiting up to `wait_ms` for one. Each comes with its lease, deadline, signed input URLs and upload URL. ' +
          'Call again as soon as it answers; an empty `jobs` means none came in time.',
        tags: TAGS,
        security: WORKER_SECURITY,
        querystring: NoQuery,
        body: ClaimRequest,
        [BODY_COMPONENT]: 'WorkerClaimRequest',
        response: { 200: ClaimAnswer, ...errorResponses(400, 413, 415) },
      },
    },
    async (request, reply) => {
      // The long poll ends when the client goes away and when the server starts closing: a draining
      // process answers its waiting claims at once, with what they took (often none).
      const wait = waits.hold(reply);
      try {
        return await remote.claims.claim(requireWorker(request.worker), request.body, publicUrl(), wait, request.log);
      } finally {
        wait.release();
      }
    },
  );

  typed.post(
    `${REMOTE_PATH_PREFIX}/jobs/:id/progress`,
    {
      bodyLimit: PROGRESS_BODY_BYTES,
      config: held,
      schema: {
        operationId: 'workerProgress',
        summary: 'Report progress; renews the lease',
        description:
          'The heartbeat: renews the lease (send it every third of the lease, at least), stores `fraction`, and moves the status ' +
          'forward to `status` (the stages between are passed; the current one is just a heartbeat). 409 with `reason`: stop working on the job.',
        tags: TAGS,
        security: WORKER_SECURITY,
        params: JobParam,
        querystring: NoQuery,
        body: ProgressRequest,
        [BODY_COMPONENT]: 'WorkerProgressRequest',
        response: { 200: ProgressAnswer, ...WorkerErrors },
      },
    },
    (request) => remote.runs.progress(requireWorker(request.worker), request.params.id, request.body, request.log),
  );

  // Raw bytes only here: the body is handed to the use case as the stream it is, never parsed.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    const maxBytes = remote.uploads.maxBytes;
    scope.withTypeProvider<TypeBoxTypeProvider>().put(
      `${REMOTE_PATH_PREFIX}/jobs/:id/outputs/:name`,
      {
        // Refused (503, Retry-After) while the data dir cannot take writes, before a byte is read.
        config: { worker: true, stores: 'store uploaded outputs' },
        // A Content-Length past the limit is refused before a byte of the body is read.
        onRequest: async (request) => {
          const length = Number(request.headers['content-length'] ?? NaN);
          if (length > maxBytes) throw tooLargeOutput(maxBytes);
        },
        schema: {
          operationId: 'workerUpload',
          summary: 'Upload an output file',
          description:
            "The file's bytes as the body (any Content-Type), streamed to the output store. Its bytes must be what its name's " +
            'extension says (PNG, JPEG, WebP, HEIC, MP4, MOV, WebM, GLB, WAV or MP3). The same name again replaces the file. ' +
            'Larger than `worker_output_max_bytes`: 413.',
          tags: TAGS,
          security: WORKER_SECURITY,
          consumes: ['application/octet-stream'],
          params: Type.Object({
            id: JobParam.properties.id,
            name: Type.String({ description: 'The file name, e.g. `output.png`', examples: ['output.png'] }),
          }),
          querystring: Type.Object({ lease_id: Type.String({ description: 'The lease of the claim', examples: ['5d1c9a7e-2b3f-4e8d-9a6c-1f0e2d3c4b5a'] }) }),
          body: Type.String({ format: 'binary', description: 'The file', examples: ['<the bytes of output.png>'] }),
          response: {
            201: UploadAnswer,
            ...WorkerErrors,
            415: workerBody('The bytes are not an output type, or not the one the name says'),
          },
        },
      },
      async (request, reply) => {
        const answer = await remote.uploads.upload(requireWorker(request.worker), request.params.id, request.params.name, request.query.lease_id, request.raw, hangUp(reply), request.log);
        return reply.code(201).send(answer);
      },
    );
  });

  typed.post(
    `${REMOTE_PATH_PREFIX}/jobs/:id/complete`,
    {
      bodyLimit: COMPLETE_BODY_BYTES,
      config: held,
      schema: {
        operationId: 'workerComplete',
        summary: 'Complete a job',
        description:
          'The uploaded files become the result (main output first), shaped as for every job; the job is charged once (a metered ' +
          "model by the main output's `duration_us`). A training job sends its `style`; no other job may.",
        tags: TAGS,
        security: WORKER_SECURITY,
        params: JobParam,
        querystring: NoQuery,
        body: CompleteRequest,
        [BODY_COMPONENT]: 'WorkerCompleteRequest',
        response: { 200: CompleteAnswer, ...WorkerErrors },
      },
    },
    (request) => remote.runs.complete(requireWorker(request.worker), request.params.id, request.body, request.log),
  );

  typed.post(
    `${REMOTE_PATH_PREFIX}/jobs/:id/fail`,
    {
      bodyLimit: FAIL_BODY_BYTES,
      config: held,
      schema: {
        operationId: 'workerFail',
        summary: 'Fail a job',
        description:
          'Fails the job with `code` and `message` (shown to the client), or, with `retryable`, hands it back to the queue for ' +
          'another attempt while it has attempts left (then it fails with `code`).',
        tags: TAGS,
        security: WORKER_SECURITY,
        params: JobParam,
        querystring: NoQuery,
        body: FailRequest,
        [BODY_COMPONENT]: 'WorkerFailRequest',
        response: { 200: FailAnswer, ...WorkerErrors },
      },
    },
    (request) => remote.runs.fail(requireWorker(request.worker), request.params.id, request.body, request.log),
  );

  // A signed URL, handed out with the claim: no Authorization, and out of the document like /outputs.
  // No automatic HEAD: it would load the whole input to answer headers; HEAD is 405.
  const inputPath = `${REMOTE_PATH_PREFIX}/jobs/:id/inputs/:n`;
  app.head(inputPath, { config: { public: true }, schema: { hide: true } }, (_request, reply) => reply.code(405).header('allow', 'GET').send());
  app.get<{ Params: { id: string; n: string }; Querystring: Record<string, string | string[] | undefined> }>(
    inputPath,
    { config: { public: true }, exposeHeadRoute: false, schema: { hide: true } },
    async (request, reply) => {
      const one = (name: string) => {
        const v = request.query[name];
        return typeof v === 'string' ? v : undefined;
      };
      const input = await remote.inputs.open(request.params.id, request.params.n, { exp: one('exp'), lease: one('lease'), tok: one('tok'), sig: one('sig') }, hangUp(reply));
      return reply.headers({ 'content-type': input.contentType, 'content-length': String(input.data.length), 'x-content-type-options': 'nosniff' }).send(input.data);
    },
  );
}
