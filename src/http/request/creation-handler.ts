/**
 * A job's creation over HTTP: the handler POST /generate/{path} and POST /styles/train share (a
 * request to the generation use case, its job answered created or waited), and the headers every
 * creating route declares (POST /node-apps/{id}/execute too). It sits in request/ beside the pieces
 * it is made of (request-headers.ts reads what headerSchema declares, prefer-wait.ts answers,
 * deprecation-headers.ts) rather than in routes/, which registers endpoints, one *-routes.ts each:
 * this module registers none, and routes importing a sibling route for it tied them together.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { WEBHOOK_URL_MAX } from '../../domain/webhook-url.js';
import type { CatalogEntry } from '../../models/catalog.js';
import type { Services } from '../../services/services.js';
import { IdempotencyKeyHeader, PreferHeader, TagsHeader } from '../openapi/common-schemas.js';
import { requireAuth } from '../plugins/auth.js';
import { deprecationHeaders } from './deprecation-headers.js';
import { createdAnswer } from './prefer-wait.js';
import type { WaitDeps } from './prefer-wait.js';
import { OPTION_LABELS, WEBHOOK_URL_PATTERN, idempotencyKeyFrom, tagsFrom, webhookUrlFrom, zeroDataRetentionFrom } from './request-headers.js';

/** What a route that creates jobs through the generation use case is given. */
export interface CreationDeps extends WaitDeps, Pick<Services, 'generation'> {
  /** `--allow-private-urls`: when false, literal private and loopback URLs are 400 at once. */
  readonly allowPrivateUrls: boolean;
  /** The largest JSON body a generation request may have (`body_limit_bytes`). */
  readonly bodyLimitBytes: number;
}

/**
 * The headers a job's creation takes: X-Webhook-URL, Idempotency-Key, X-Mediagen-Tags and, where offered (a catalog
 * entry says; a node app never does), zero data retention.
 */
export function headerSchema(entry: Pick<CatalogEntry, 'zeroDataRetention'>) {
  return Type.Object({
    'x-webhook-url': Type.Optional(
      Type.String({
        format: 'uri',
        pattern: WEBHOOK_URL_PATTERN,
        maxLength: WEBHOOK_URL_MAX,
        description: 'An absolute http(s) URL that receives a POST when the job reaches a terminal status',
      }),
    ),
    'idempotency-key': Type.Optional(IdempotencyKeyHeader),
    'x-mediagen-tags': Type.Optional(TagsHeader),
    prefer: Type.Optional(PreferHeader),
    ...(entry.zeroDataRetention
      ? { 'x-api-zero-data-retention': Type.Optional(Type.Literal('1', { description: 'Enables zero data retention' })) }
      : {}),
  });
}

/**
 * What a route that creates a job of `entry` does: headers to the use case's options, and its
 * job back with the deprecation and Idempotent-Replayed headers. The body limit is the route's
 * (its `bodyLimit`), not the handler's.
 */
export function creationHandler(entry: CatalogEntry, deps: Omit<CreationDeps, 'bodyLimitBytes'>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = requireAuth(request.auth);
    const headers = request.raw.rawHeaders;
    const created = await deps.generation.create(
      {
        model: entry.path,
        body: request.body,
        caller,
        options: {
          webhookUrl: webhookUrlFrom(headers),
          zeroDataRetention: zeroDataRetentionFrom(headers, entry.zeroDataRetention),
          idempotencyKey: idempotencyKeyFrom(headers),
          requestId: request.id,
          tags: tagsFrom(headers),
        },
      },
      { allowPrivateUrls: deps.allowPrivateUrls, publicUrl: deps.publicUrl(), labels: OPTION_LABELS },
    );
    if (entry.deprecation) reply.headers(deprecationHeaders(entry.deprecation, deps.publicUrl()));
    if (created.replayed) reply.header('Idempotent-Replayed', 'true');
    return reply.code(200).send(await createdAnswer(request, reply, caller, created, deps));
  };
}
