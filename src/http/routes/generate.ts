import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../../lib/clock.js';
import type { Catalog, CatalogEntry } from '../../services/catalog/catalog.js';
import { applyAliases } from '../../services/catalog/aliases.js';
import { deprecationHeaders, isSunset, sunsetError } from '../../services/catalog/deprecation.js';
import type { JobService } from '../../services/jobs.js';
import { requireAuth } from '../plugins/auth.js';
import { IDEMPOTENCY_KEY_MAX, WEBHOOK_URL_MAX, WEBHOOK_URL_PATTERN, idempotencyKeyFrom, webhookUrlFrom, zeroDataRetentionFrom } from '../request-headers.js';
import { refusePrivateUrls } from '../private-urls.js';
import { rejectUnknown } from '../query.js';
import type { RawQuery } from '../query.js';
import { BalanceBody, CreatedJob, IdempotencyErrors, ReplayedHeader, SunsetBody, errorResponses } from '../schemas.js';

export interface GenerateDeps {
  readonly catalog: Catalog;
  readonly jobs: JobService;
  readonly clock: Clock;
  readonly publicUrl: () => string;
  /** `--allow-private-urls`: when false, literal private and loopback URLs are 400 at once. */
  readonly allowPrivateUrls: boolean;
  /** The largest JSON body a generation request may have (`body_limit_bytes`). */
  readonly bodyLimitBytes: number;
}

/** `image/vendor-a/model-a-2/medium` → `generateImageVendorAModelA2Medium` */
const operationId = (path: string) =>
  `generate-${path}`.split(/[^A-Za-z0-9]+/).map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');

const DeprecationHeaders = {
  deprecation: { type: 'string', const: 'true', description: 'This model is deprecated' },
  sunset: { type: 'string', description: 'RFC 1123 date from which the model answers 410' },
  link: { type: 'string', description: '`<migration_url>; rel="deprecation"`' },
};

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function headerSchema(entry: CatalogEntry) {
  return Type.Object({
    'x-webhook-url': Type.Optional(
      Type.String({
        format: 'uri',
        pattern: WEBHOOK_URL_PATTERN,
        maxLength: WEBHOOK_URL_MAX,
        description: 'An absolute http(s) URL that receives a POST when the job reaches a terminal status',
      }),
    ),
    'idempotency-key': Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: IDEMPOTENCY_KEY_MAX + 2,
        description:
          'Makes a retry safe: the same key with the same request within 24 hours answers the first response again (with `Idempotent-Replayed: true`) and creates no second job. 1 to 255 printable ASCII characters, bare or as a quoted string; per workspace. See docs/errors.md.',
      }),
    ),
    ...(entry.zeroDataRetention
      ? { 'x-api-zero-data-retention': Type.Optional(Type.Literal('1', { description: 'Enables zero data retention' })) }
      : {}),
  });
}

/** POST /generate/{model path} for every catalog entry; adding a model is adding an entry. */
export function registerGenerateRoutes(app: FastifyInstance, deps: GenerateDeps): void {
  for (const entry of deps.catalog.entries) {
    const retired = !entry.request;
    app.post(
      `/generate/${entry.path}`,
      {
        bodyLimit: deps.bodyLimitBytes,
        schema: {
          operationId: operationId(entry.path),
          summary: entry.summary,
          ...(entry.deprecation
            ? { description: `Deprecated: answers 410 from ${entry.deprecation.sunsetDate}${entry.deprecation.replacement ? `; use ${entry.deprecation.replacement}` : ''}.` }
            : {}),
          tags: [entry.engine === 'image' ? 'image generation' : 'video generation'],
          ...(entry.deprecation ? { deprecated: true } : {}),
          headers: headerSchema(entry),
          ...(entry.request ? { body: entry.request } : {}),
          response: retired
            ? { ...errorResponses(401, 403), 410: SunsetBody }
            : {
                200: { ...CreatedJob, headers: { ...ReplayedHeader, ...(entry.deprecation ? DeprecationHeaders : {}) } },
                ...errorResponses(400, 401, 403, 413, 415, 429),
                ...IdempotencyErrors,
                402: BalanceBody,
                ...(entry.deprecation ? { 410: SunsetBody } : {}),
              },
        },
        // Sunset is checked per request, so it takes effect the moment the date is reached.
        onRequest: async () => {
          if (entry.deprecation && (retired || isSunset(entry.deprecation, deps.clock.nowMs()))) {
            throw sunsetError(entry.path, entry.deprecation, deps.publicUrl());
          }
        },
        preValidation: async (request: FastifyRequest) => {
          if (entry.aliases.length > 0 && isPlainObject(request.body)) {
            request.body = applyAliases(
              request.body,
              entry.aliases,
              deps.catalog.aliasSunsetDate,
              deps.catalog.aliasSunsetMs,
              deps.clock.nowMs(),
            );
          }
        },
      },
      async (request, reply) => {
        rejectUnknown(request.query as RawQuery, []);
        const webhookUrl = webhookUrlFrom(request.raw.rawHeaders);
        const zeroDataRetention = zeroDataRetentionFrom(request.raw.rawHeaders, entry);
        if (!deps.allowPrivateUrls) refusePrivateUrls(entry.request, request.body, webhookUrl);
        const idempotencyKey = idempotencyKeyFrom(request.raw.rawHeaders);
        const created = await deps.jobs.create(requireAuth(request.auth), {
          model: entry,
          request: request.body as Record<string, unknown>,
          webhookUrl,
          zeroDataRetention,
          idempotencyKey,
        });
        if (entry.deprecation) reply.headers(deprecationHeaders(entry.deprecation, deps.publicUrl()));
        if (created.replayed) reply.header('Idempotent-Replayed', 'true');
        return reply.code(created.status).send(created.body);
      },
    );
  }
}
