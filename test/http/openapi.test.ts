import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_ERROR_CODES } from '../../src/engines/engine.js';
import { MODELS } from '../../src/models/registry.js';
import { createTestApp } from '../helpers/app.js';
import { CUSTOM_MODELS } from '../helpers/custom-models.js';
import type { TestApp } from '../helpers/app.js';

// ajv-formats is CommonJS; under node16 ESM its callable is the default export's default.
const addFormats = addFormatsImport as unknown as typeof addFormatsImport.default;

type Schema = { $ref?: string; properties?: Record<string, Schema>; description?: string; examples?: unknown[]; pattern?: string; [k: string]: unknown };
type Media = { schema: Schema; example?: unknown; examples?: unknown };
type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  deprecated?: boolean;
  security?: unknown[];
  parameters?: { name: string; in: string; description?: string; example?: unknown }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description?: string; headers?: Record<string, unknown>; content?: Record<string, Media> }>;
};
type Doc = {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Schema> };
  security: unknown[];
};

/** A `$ref` to a component, followed; anything else as it is. */
const deref = (doc: Doc, schema: Schema): Schema =>
  schema.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema;

describe('GET /openapi.json', () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await createTestApp({
      deprecations: [{ model: 'video/vendor-f/model-f', sunset_date: '2027-01-01' }],
    });
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  afterAll(() => t.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('declares every error answer of every operation as a named component', () => {
    const inline: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops as Record<string, Operation>)) {
        for (const [status, res] of Object.entries(op.responses ?? {})) {
          const schema = (res as { content?: Record<string, { schema: Schema }> }).content?.['application/json']?.schema;
          if (Number(status) >= 400 && schema && !schema.$ref) inline.push(`${method} ${path} ${status}`);
        }
      }
    }
    expect(inline).toEqual([]);
  });

  it('names every job error code, the upstream ones included, in the JobError schema', () => {
    const code = doc.components.schemas.JobError!.properties!.code as { description: string };
    for (const c of Object.keys(JOB_ERROR_CODES)) expect(code.description, c).toContain(`\`${c}\``);
    expect(code.description).toContain('`upstream_unavailable`');
  });

  it('has every path of spec section 4 with its methods', () => {
    expect(Object.keys(doc.paths['/jobs']!)).toContain('get');
    expect(Object.keys(doc.paths['/jobs/{id}']!).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(doc.paths['/node-apps/{node_app_id}/versions']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/usage']!)).toEqual(['get']);
    // An extension: what happened to a job's webhook.
    expect(Object.keys(doc.paths['/jobs/{id}/webhook-deliveries']!)).toEqual(['get']);
    // What the web console reads and does through the public API (issue 21).
    expect(Object.keys(doc.paths['/workspace']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/workspace/webhook-secret']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/workspace/webhook-secret/rotate']!)).toEqual(['post']);
    expect(Object.keys(doc.paths['/tokens']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/tokens/{id}/revoke']!)).toEqual(['post']);
    expect(Object.keys(doc.paths['/webhook-deliveries']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/jobs/{id}/details']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/models/{id}/quote']!)).toEqual(['post']);
    // A model with a route of its own (style training) is served there, not under /generate.
    for (const m of MODELS) expect(doc.paths[m.route ?? `/generate/${m.path}`]?.post, m.path).toBeDefined();
    expect(doc.paths['/generate/loraTraining']).toBeUndefined();
    expect(Object.keys(doc.paths['/styles']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/styles/{id}']!).sort()).toEqual(['get', 'patch']);
    expect(Object.keys(doc.paths['/styles/{id}/share/link']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/styles/{id}/share/workspace']!).sort()).toEqual(['delete', 'post']);
  });

  it('declares bearer security for the API and none for the public documents', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/deprecations']!.get!.security).toEqual([]);
    expect(doc.paths['/models']!.get!.security).toEqual([]);
  });

  it('names the list cursor next_cursor and documents the query parameters', () => {
    const page = deref(doc, doc.paths['/jobs']!.get!.responses['200']!.content!['application/json']!.schema);
    expect(Object.keys(page.properties!)).toEqual(['items', 'next_cursor']);
    const params = doc.paths['/jobs']!.get!.parameters!.map((p) => p.name).sort();
    expect(params).toEqual(['cursor', 'end', 'limit', 'start', 'status', 'tag', 'types']);
  });

  it('hides the deprecated camelCase aliases from request bodies', () => {
    const text = JSON.stringify(doc);
    for (const alias of ['presetStyles', 'imageStyleRefs', 'outputFormat', 'webSearch', 'styleImages', 'startImage', 'aspectRatio', 'generateAudio', 'cameraControl', 'endImage', 'expandPrompt']) {
      expect(text).not.toContain(`"${alias}"`);
    }
    const body = deref(doc, doc.paths['/generate/image/vendor-a/model-a-2/medium']!.post!.requestBody!.content['application/json']!.schema);
    expect(Object.keys(body.properties!)).toContain('image_style_references');
  });

  it('marks retired and deprecated models deprecated, and only those', () => {
    const deprecated = Object.entries(doc.paths)
      .filter(([, ops]) => ops.post?.deprecated)
      .map(([path]) => path)
      .sort();
    expect(deprecated).toEqual([
      '/generate/image/vendor-g/model-g-3',
      '/generate/video/vendor-f/model-f',
      '/generate/video/vendor-g/model-h-1.0-lite',
      '/generate/video/vendor-i/model-i-2',
    ]);
  });

  it('names this server as it is reached and gives every operation a unique operationId', () => {
    expect(doc.servers).toEqual([{ url: 'http://mediagen.test' }]);
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(ids.every((id) => typeof id === 'string' && /^[A-Za-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths['/generate/image/vendor-a/model-a-2/medium-turbo']!.post!.operationId).toBe('generateImageVendorAModelA2MediumTurbo');
  });

  it('declares the deprecation headers on a deprecated model that still answers', () => {
    const ok = doc.paths['/generate/video/vendor-f/model-f']!.post!.responses['200']!;
    expect(Object.keys(ok.headers ?? {}).sort()).toEqual(['deprecation', 'idempotent-replayed', 'link', 'preference-applied', 'sunset']);
    expect(Object.keys(doc.paths['/generate/video/vendor-d/model-d-fast']!.post!.responses['200']!.headers ?? {})).toEqual(['idempotent-replayed', 'preference-applied']);
  });

  it('declares the Idempotency-Key header, the replay header and the 409 and 422 answers on every POST that creates', () => {
    // Sharing a style, cancelling a job, revoking a token and rotating the webhook secret are idempotent or change
    // state by themselves; a quote creates nothing; a token's creation takes no key, whose stored answer would keep
    // its secret (docs/decisions.md, issue 21); the worker protocol creates nothing.
    const keyless = ['/styles/{id}/share/workspace', '/jobs/{id}/cancel', '/tokens', '/tokens/{id}/revoke', '/workspace/webhook-secret/rotate', '/models/{id}/quote'];
    const posts = Object.entries(doc.paths).filter(([path, ops]) => ops.post && !keyless.includes(path) && !path.startsWith('/worker/v1/'));
    expect(posts.length).toBeGreaterThan(0);
    for (const [path, ops] of posts) {
      const op = ops.post!;
      expect(op.parameters?.map((p) => p.name), path).toContain('idempotency-key');
      if (op.requestBody === undefined) continue; // retired: answers 410 before any key is read
      expect(Object.keys(op.responses), path).toEqual(expect.arrayContaining(['409', '422']));
      expect(Object.keys(op.responses['200']!.headers ?? {}), path).toContain('idempotent-replayed');
    }
  });

  it('declares for retired models only the answers they give: 401, 403, 410 and 503', () => {
    const op = doc.paths['/generate/video/vendor-i/model-i-2']!.post!;
    expect(Object.keys(op.responses).sort()).toEqual(['401', '403', '410', '503']);
    expect(op.requestBody).toBeUndefined();
  });

  it('documents the 410 body on deprecated models', () => {
    const gone = deref(doc, doc.paths['/generate/image/vendor-g/model-g-3']!.post!.responses['410']!.content!['application/json']!.schema);
    expect(Object.keys(gone.properties!)).toEqual(['error', 'reason', 'message', 'sunset_date', 'replacement', 'migration_url']);
  });
});

describe('GET /openapi.json for client generators', () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    // Custom models from the config file are held to every rule below too.
    t = await createTestApp({ deprecations: [{ model: 'video/vendor-f/model-f', sunset_date: '2027-01-01' }], models: [...CUSTOM_MODELS] });
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  afterAll(() => t.close());

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ name: `${method} ${path}`, op })));

  it('names the shared shapes as components and references them with $ref', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Job', 'JobPage', 'Error', 'Error410', 'CreatedJob', 'BalanceError', 'ModelA2Request', 'ModelB1Request', 'ModelFRequest']),
    );
    const media = (op: Operation, status: string) => op.responses[status]!.content!['application/json']!.schema;
    expect(media(doc.paths['/jobs/{id}']!.get!, '200')).toEqual({ $ref: '#/components/schemas/Job' });
    expect(media(doc.paths['/jobs']!.get!, '200')).toEqual({ $ref: '#/components/schemas/JobPage' });
    expect(media(doc.paths['/jobs/{id}']!.get!, '404')).toEqual({ $ref: '#/components/schemas/Error' });
    expect(media(doc.paths['/generate/image/vendor-g/model-g-3']!.post!, '410')).toEqual({ $ref: '#/components/schemas/Error410' });
    // The console's shapes are components too, so the client's types name them.
    for (const [path, method, status, name] of [
      ['/workspace', 'get', '200', 'Workspace'],
      ['/tokens', 'get', '200', 'ApiTokenList'],
      ['/tokens', 'post', '201', 'CreatedApiToken'],
      ['/tokens/{id}/revoke', 'post', '200', 'ApiToken'],
      ['/workspace/webhook-secret', 'get', '200', 'WebhookSecret'],
      ['/workspace/webhook-secret/rotate', 'post', '200', 'WebhookSecret'],
      ['/webhook-deliveries', 'get', '200', 'WebhookDeliveryPage'],
      ['/jobs/{id}/details', 'get', '200', 'JobDetails'],
      ['/models/{id}/quote', 'post', '200', 'PriceQuote'],
      ['/models/{id}/quote', 'post', '410', 'Error410'],
      ['/assets', 'post', '413', 'AssetTooLarge'],
      ['/assets/{id}', 'delete', '200', 'DeletedAsset'],
    ] as const) {
      expect(media(doc.paths[path]![method]!, status), `${method} ${path}`).toEqual({ $ref: `#/components/schemas/${name}` });
    }
    expect(doc.components.schemas.JobDetails!.properties!.job).toEqual({ $ref: '#/components/schemas/Job' });
    expect(doc.components.schemas.JobPage!.properties!.items!.items).toEqual({ $ref: '#/components/schemas/Job' });
    // The three model-a-2 variants share one body, so one component.
    for (const v of ['medium', 'large', 'medium-turbo']) {
      expect(doc.paths[`/generate/image/vendor-a/model-a-2/${v}`]!.post!.requestBody!.content['application/json']!.schema).toEqual({
        $ref: '#/components/schemas/ModelA2Request',
      });
    }
    // Every $ref resolves.
    for (const [, ref] of JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      expect(doc.components.schemas[ref!], ref).toBeDefined();
    }
  });

  it('gives every operation a summary, a description and examples of its body and answers', () => {
    for (const { name, op } of operations()) {
      expect(op.summary, name).toBeTruthy();
      expect(op.description, name).toBeTruthy();
      const medias = [op.requestBody?.content, ...Object.values(op.responses).map((r) => r.content)].flatMap((c) => Object.values(c ?? {}));
      expect(medias.length, name).toBeGreaterThan(0);
      for (const m of medias) expect(m.example ?? m.examples, name).toBeDefined();
      for (const [status, r] of Object.entries(op.responses)) expect(r.description, `${name} ${status}`).toBeTruthy();
      for (const p of op.parameters ?? []) {
        expect(p.description, `${name} ${p.name}`).toBeTruthy();
        if (p.in !== 'header') expect(p.example, `${name} ${p.name}`).toBeDefined();
      }
    }
  });

  it('gives examples that are valid against their schemas', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const root = { $id: 'openapi', components: doc.components };
    ajv.addSchema(root);
    const checked: string[] = [];
    const check = (where: string, schema: Schema, example: unknown) => {
      if (example === undefined) return;
      const validate = ajv.compile(schema.$ref ? { $ref: `openapi${schema.$ref}` } : schema);
      expect(validate(example), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
      checked.push(where);
    };
    for (const { name, op } of [...operations(), { name: 'webhook', op: doc.webhooks.jobFinished!.post! }]) {
      for (const [type, m] of Object.entries(op.requestBody?.content ?? {})) check(`${name} body ${type}`, m.schema, m.example);
      for (const [status, r] of Object.entries(op.responses)) {
        for (const m of Object.values(r.content ?? {})) check(`${name} ${status}`, m.schema, m.example);
      }
    }
    expect(checked.length).toBeGreaterThan(50);
  });

  it('gives every field of every component, request bodies included, a description and an example', () => {
    const missing: string[] = [];
    const visit = (schema: Schema, at: string) => {
      for (const [name, prop] of Object.entries(schema.properties ?? {})) {
        if (prop.$ref) continue; // a component, checked on its own
        if (!prop.description) missing.push(`${at}.${name}: description`);
        const literal = prop.const !== undefined || (Array.isArray(prop.anyOf) === false && prop.type === 'null');
        const nested = prop.type === 'object' || (prop.type === 'array' && ((prop.items as Schema).$ref || (prop.items as Schema).properties));
        if (!prop.examples && !literal && !nested) missing.push(`${at}.${name}: example`);
        if (prop.type === 'object') visit(prop, `${at}.${name}`);
        if (prop.type === 'array' && (prop.items as Schema).properties) visit(prop.items as Schema, `${at}.${name}[]`);
      }
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) visit(schema, name);
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['ModelA2Request', 'ModelE1Request', 'ImageAcmeGradientV1Request', 'VideoAcmeMorphV1Request']));
    expect(missing).toEqual([]);
  });

  it("gives field examples that are valid against the field's own schema", () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi', components: doc.components });
    const invalid: string[] = [];
    let checked = 0;
    const visit = (schema: Schema, at: string) => {
      for (const [name, prop] of [...Object.entries(schema.properties ?? {}), ...(schema.items ? [['[]', schema.items as Schema] as const] : [])]) {
        if (prop.$ref) continue;
        // A nested $ref points into the document, which Ajv holds as `openapi`.
        const validate = ajv.compile(JSON.parse(JSON.stringify(prop).replaceAll('"#/components/', '"openapi#/components/')) as object);
        for (const example of prop.examples ?? []) {
          checked++;
          if (!validate(example)) invalid.push(`${at}.${name}: ${JSON.stringify(example)} ${JSON.stringify(validate.errors)}`);
        }
        visit(prop, `${at}.${name}`);
      }
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) visit(schema, name);
    expect(invalid).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('declares Retry-After where the server sends it and the deprecation headers on deprecated models', () => {
    const op = doc.paths['/generate/image/vendor-a/model-a-2/medium']!.post!;
    for (const status of ['409', '429', '503']) expect(Object.keys(op.responses[status]!.headers ?? {}), status).toContain('retry-after');
    for (const { name, op: any } of operations()) expect(Object.keys(any.responses['503']?.headers ?? {}), name).toContain('retry-after');
    const deprecated = doc.paths['/generate/video/vendor-f/model-f']!.post!.responses['200']!.headers!;
    expect(Object.keys(deprecated)).toEqual(expect.arrayContaining(['deprecation', 'sunset', 'link']));
  });

  it('uses no regex feature that validators outside JavaScript refuse', () => {
    const patterns = [...JSON.stringify(doc).matchAll(/"pattern":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string);
    expect(patterns.length).toBeGreaterThan(0);
    for (const p of patterns) {
      expect(p, p).not.toMatch(/\(\?[=!<]|\\[1-9]|\\k</);
      expect(() => new RegExp(p, 'u'), p).not.toThrow();
    }
  });

  it('describes the webhook delivery with its Standard Webhooks headers and the Job payload', () => {
    const post = doc.webhooks.jobFinished!.post!;
    expect(post.parameters!.map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    expect(post.requestBody!.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Job' });
    expect(post.requestBody!.content['application/json']!.example).toBeDefined();
  });

  it('declares the bearer scheme and applies it to every operation but the public ones', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const open = operations().filter(({ op }) => op.security !== undefined && op.security.length === 0).map(({ name }) => name);
    expect(open.sort()).toEqual(['get /deprecations', 'get /models', 'get /models/{id}']);
    // The worker protocol takes worker tokens, and only it does.
    expect(doc.components.securitySchemes.workerToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    const workers = operations().filter(({ op }) => JSON.stringify(op.security) === JSON.stringify([{ workerToken: [] }])).map(({ name }) => name);
    expect(workers.sort()).toEqual([
      'post /worker/v1/claim',
      'post /worker/v1/jobs/{id}/complete',
      'post /worker/v1/jobs/{id}/fail',
      'post /worker/v1/jobs/{id}/progress',
      'put /worker/v1/jobs/{id}/outputs/{name}',
    ]);
    expect(operations().filter(({ op }) => op.security !== undefined)).toHaveLength(open.length + workers.length);
    for (const name of workers) expect((operations().find((o) => o.name === name)!.op as { tags?: string[] }).tags, name).toEqual(['workers']);
    // Signed input URLs are handed out, not called by construction: out of the document, like /outputs.
    expect(Object.keys(doc.paths).filter((p) => p.includes('/inputs/'))).toEqual([]);
  });
});
