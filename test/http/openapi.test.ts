import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../../src/models/registry.js';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';

type Doc = {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, { operationId?: string; deprecated?: boolean; security?: unknown[]; parameters?: { name: string }[]; requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> }; responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: { properties?: Record<string, unknown> } }> }> }>>;
  components: { securitySchemes: Record<string, unknown> };
  security: unknown[];
};

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

  it('has every path of spec section 4 with its methods', () => {
    expect(Object.keys(doc.paths['/jobs']!)).toContain('get');
    expect(Object.keys(doc.paths['/jobs/{id}']!).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(doc.paths['/node-apps/{node_app_id}/versions']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/usage']!)).toEqual(['get']);
    // An extension: what happened to a job's webhook.
    expect(Object.keys(doc.paths['/jobs/{id}/webhook-deliveries']!)).toEqual(['get']);
    for (const m of MODELS) expect(doc.paths[`/generate/${m.path}`]?.post, m.path).toBeDefined();
  });

  it('declares bearer security for the API and none for the public documents', () => {
    expect(doc.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/deprecations']!.get!.security).toEqual([]);
  });

  it('names the list cursor next_cursor and documents the query parameters', () => {
    const page = doc.paths['/jobs']!.get!.responses['200']!.content!['application/json']!.schema;
    expect(Object.keys(page.properties!)).toEqual(['items', 'next_cursor']);
    const params = doc.paths['/jobs']!.get!.parameters!.map((p) => p.name).sort();
    expect(params).toEqual(['cursor', 'limit', 'status', 'types']);
  });

  it('hides the deprecated camelCase aliases from request bodies', () => {
    const text = JSON.stringify(doc);
    for (const alias of ['presetStyles', 'imageStyleRefs', 'outputFormat', 'webSearch', 'styleImages', 'startImage', 'aspectRatio', 'generateAudio', 'cameraControl', 'endImage', 'expandPrompt']) {
      expect(text).not.toContain(`"${alias}"`);
    }
    const body = doc.paths['/generate/image/vendor-a/model-a-2/medium']!.post!.requestBody!.content['application/json']!.schema;
    expect(Object.keys(body.properties)).toContain('image_style_references');
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
    expect(Object.keys(ok.headers ?? {}).sort()).toEqual(['deprecation', 'idempotent-replayed', 'link', 'sunset']);
    expect(Object.keys(doc.paths['/generate/video/vendor-d/model-d-fast']!.post!.responses['200']!.headers ?? {})).toEqual(['idempotent-replayed']);
  });

  it('declares the Idempotency-Key header, the replay header and the 409 and 422 answers on every POST that creates', () => {
    const posts = Object.entries(doc.paths).filter(([, ops]) => ops.post);
    expect(posts.length).toBeGreaterThan(0);
    for (const [path, ops] of posts) {
      const op = ops.post!;
      expect(op.parameters?.map((p) => p.name), path).toContain('idempotency-key');
      if (op.requestBody === undefined) continue; // retired: answers 410 before any key is read
      expect(Object.keys(op.responses), path).toEqual(expect.arrayContaining(['409', '422']));
      expect(Object.keys(op.responses['200']!.headers ?? {}), path).toContain('idempotent-replayed');
    }
  });

  it('declares for retired models only the answers they give: 401, 403 and 410', () => {
    const op = doc.paths['/generate/video/vendor-i/model-i-2']!.post!;
    expect(Object.keys(op.responses).sort()).toEqual(['401', '403', '410']);
    expect(op.requestBody).toBeUndefined();
  });

  it('documents the 410 body on deprecated models', () => {
    const gone = doc.paths['/generate/image/vendor-g/model-g-3']!.post!.responses['410']!.content!['application/json']!.schema;
    expect(Object.keys(gone.properties!)).toEqual(['error', 'reason', 'message', 'sunset_date', 'replacement', 'migration_url']);
  });
});
