import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { Job } from '../../services/common/job-view.js';
import { REMOTE_PATH_PREFIX } from '../../services/remote/remote-constants.js';
import { ErrorBody } from './common-schemas.js';
import { exampleOf } from './openapi-examples.js';
import { isPlainObject } from '../../lib/plain-object.js';

/**
 * How the route schemas become an OpenAPI 3.1 document a client generator can use:
 * - every schema with an `$id` (Job, JobPage, Error, Error410, ...) becomes a component of that
 *   name, referenced with `$ref` wherever it appears; a request body without one is named after
 *   its model (`bodyComponentName`);
 * - each request body and JSON response gets an example (the component's own, or one built from
 *   the schema's defaults, enums and formats);
 * - the webhook delivery is described under `webhooks` (OpenAPI 3.1).
 * @fastify/swagger would name nested `$id` schemas `def-N` and inline top-level ones; doing the
 * hoisting here, before it sees the schemas, keeps the names.
 */

type Json = Record<string, unknown>;
type Schema = Json;

const REF = '#/components/schemas/';

/** A route schema's key naming its body's component (a model's `requestName`); not emitted. */
export const BODY_COMPONENT = 'x-body-component';

/**
 * An operation's extension naming the shape of its job's `result.urls` when it is not the plain
 * list of URLs (a 3D model and its preview); emitted as a `$ref` to that component.
 */
export const RESULT_URLS = 'x-result-urls';


/** The security of the worker protocol's operations (REMOTE_PATH_PREFIX): a worker token, not an API token. */
export const WORKER_SECURITY = [{ workerToken: [] }];

/** Collects components while route schemas are rewritten to reference them. */
class Components {
  readonly schemas = new Map<string, Schema>();
  /** Which schema object each name was taken from: one name, one schema. */
  readonly #sources = new Map<string, object>();

  constructor(canonical: readonly Schema[]) {
    // Registered first so a response that overrides a description (errorResponses) does not
    // become the component's text.
    for (const schema of canonical) this.ref(schema);
  }

  /** `schema` with every nested `$id` schema replaced by a `$ref`. */
  rewrite(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.rewrite(s));
    if (!isPlainObject(schema)) return schema;
    if (typeof schema.$id === 'string') return this.ref(schema);
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'examples' || k === 'default' || k === 'const' || k === 'enum' ? v : this.rewrite(v)]));
  }

  /** Registers `schema` under `name` (default its `$id`) and returns the reference to it. */
  ref(schema: Schema, name: string = schema.$id as string): Json {
    const source = this.#sources.get(name);
    if (source === undefined) {
      this.#sources.set(name, schema);
      const { $id: _id, headers: _headers, ...rest } = schema;
      this.schemas.set(name, { ...(this.rewrite(rest) as Schema) });
    } else if (source !== schema && !sameShape(source as Schema, schema)) {
      throw new Error(`two different schemas are named ${name} in the OpenAPI document`);
    }
    return { $ref: `${REF}${name}` };
  }
}

/** Two schemas under one `$id` must agree except for the description a response gives it. */
function sameShape(a: Schema, b: Schema): boolean {
  const strip = ({ description: _d, headers: _h, ...rest }: Schema) => JSON.stringify(rest);
  return strip(a) === strip(b);
}

interface RouteSchema {
  readonly body?: Schema;
  readonly response?: Readonly<Record<string, Schema>>;
  readonly [key: string]: unknown;
}

/** A route's schema with components referenced; response descriptions and headers stay on the response. */
function transformRoute(schema: RouteSchema, components: Components): RouteSchema {
  const out: Json = { ...schema };
  if (schema.body) {
    const named = schema[BODY_COMPONENT] ?? schema.body.$id;
    const name = typeof named === 'string' ? named : undefined;
    delete out[BODY_COMPONENT];
    out.body = name ? components.ref(schema.body, name) : components.rewrite(schema.body);
  }
  if (schema[RESULT_URLS]) out[RESULT_URLS] = components.rewrite(schema[RESULT_URLS]);
  if (schema.response) {
    out.response = Object.fromEntries(
      Object.entries(schema.response).map(([status, res]) => {
        if (typeof res.$id !== 'string') return [status, components.rewrite(res)];
        return [status, { ...components.ref(res), ...(res.description ? { description: res.description } : {}), ...(res.headers ? { headers: res.headers } : {}) }];
      }),
    );
  }
  return out as RouteSchema;
}

const webhookHeader = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

/** The job-end delivery (spec 6), signed as Standard Webhooks (docs/webhooks.md). */
const WEBHOOKS = {
  jobFinished: {
    post: {
      operationId: 'jobFinishedWebhook',
      summary: 'A job reached a terminal status',
      description:
        'POSTed to the X-Webhook-URL given when the job was created, once the job is completed, failed or cancelled. ' +
        'The body is the job as GET /jobs/{id} shows it: `completed_at` is always present; `result` only on a completed job ' +
        '(a failed or cancelled one has none, and a failed one has `error`). Signed per Standard Webhooks: verify `webhook-signature` over ' +
        '`${webhook-id}.${webhook-timestamp}.${body}` with the workspace secret, reject old timestamps, and treat a repeated ' +
        '`webhook-id` as a duplicate (deliveries are retried until a 2xx).',
      parameters: [
        webhookHeader('webhook-id', 'The delivery id, the same on every attempt: deduplicate on it', 'msg_0b9f6f0e6c1d4a519d0a2f1d3c4b5a69'),
        webhookHeader('webhook-timestamp', 'Seconds since the Unix epoch when this attempt was signed', '1795435204'),
        webhookHeader(
          'webhook-signature',
          'Space-separated `v1,<base64 HMAC-SHA256>` signatures, one per valid secret (two for 24 hours after a rotation)',
          'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        ),
      ],
      requestBody: {
        required: true,
        description: 'The job in its terminal status',
        content: { 'application/json': { schema: { $ref: `${REF}Job` }, example: (Job.examples as unknown[])[0] } },
      },
      responses: {
        '200': { description: 'Received. Any 2xx acknowledges; answer promptly and process later.' },
        '410': { description: 'Gone: stops the deliveries of this job at once' },
        default: { description: 'Anything else (including 3xx) is retried with backoff; `Retry-After` on 429 and 503 can lengthen the wait' },
      },
      security: [],
    },
  },
};

/** Each request body and JSON response of an operation gets an example from its schema. */
function addExamples(doc: Json, components: ReadonlyMap<string, Schema>): void {
  const resolve = (schema: unknown): unknown =>
    isPlainObject(schema) && typeof schema.$ref === 'string' ? components.get(schema.$ref.slice(REF.length)) : schema;
  const lookup = (ref: string) => components.get(ref.slice(REF.length));
  for (const ops of Object.values((doc.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const op of Object.values(ops)) {
      const bodies = [(op.requestBody as Json | undefined)?.content, ...Object.values((op.responses ?? {}) as Record<string, Json>).map((r) => r.content)];
      for (const content of bodies) {
        if (!isPlainObject(content)) continue;
        for (const media of Object.values(content) as Json[]) {
          if (media.example !== undefined || media.examples !== undefined) continue;
          const example = exampleOf(resolve(media.schema), lookup);
          if (example !== undefined) media.example = example;
        }
      }
    }
  }
}

/** The @fastify/swagger options: the document's frame and the transforms above. */
export function swaggerOptions(): FastifyDynamicSwaggerOptions {
  let components = new Components([ErrorBody]);
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'mediagen',
        version: 'v1',
        description:
          'Asynchronous media generation jobs. Paths carry no version prefix. A POST to a generation endpoint creates a job ' +
          'and answers at once; read the outcome with GET /jobs/{id} or receive it at an X-Webhook-URL (see `webhooks`).',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token: `Authorization: Bearer <API_TOKEN>`' },
          workerToken: { type: 'http', scheme: 'bearer', description: 'A worker token (`mgw_...`, docs/workers.md): `Authorization: Bearer <WORKER_TOKEN>`; only the ' + REMOTE_PATH_PREFIX + ' routes take it' },
        },
      },
      security: [{ bearerAuth: [] }],
      tags: [
        {
          name: 'openai compatible',
          description:
            "OpenAI's Images, Videos and Models APIs under /v1, over the same jobs, tokens, balances and limits (docs/openai.md). " +
            "Errors there are in OpenAI's shape: {error: {message, type, param, code}}.",
        },
      ],
      webhooks: WEBHOOKS,
    } as FastifyDynamicSwaggerOptions['openapi'],
    transform: ({ schema, url }) => {
      if (!schema || (schema as { hide?: boolean }).hide) return { schema, url };
      return { schema: transformRoute(schema as RouteSchema, components) as typeof schema, url };
    },
    transformObject: (documentObject) => {
      const doc = ('openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject) as Json;
      const schemas = (isPlainObject(doc.components) && isPlainObject(doc.components.schemas) ? doc.components.schemas : {}) as Json;
      for (const [name, schema] of components.schemas) schemas[name] = schema;
      (doc.components as Json).schemas = schemas;
      addExamples(doc, components.schemas);
      // The next generation (app.swagger() caches its result, so this runs once) starts afresh.
      components = new Components([ErrorBody]);
      return doc as ReturnType<NonNullable<FastifyDynamicSwaggerOptions['transformObject']>>;
    },
  };
}
