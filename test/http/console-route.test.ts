import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../src/http/plugins/error-handler.js';
import { consolePolicy, registerConsoleRoutes } from '../../src/http/routes/console-routes.js';

/**
 * How /console serves a build (src/http/routes/console-routes.ts), on a small build of the test's own:
 * the browser tests (test/console/) run the real one.
 */
const HTML = '<!doctype html><script type="module" src="/console/assets/index-abc.js"></script>';
const JS = `export const big = ${JSON.stringify('x'.repeat(4000))};`;
const HASH = "'sha256-PXtZZkJMMyc18o/DN1ZEFOJ2qEGq95IQbVaJFMOXOb0='";

let app: FastifyInstance | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  app = dir = undefined;
});

function build(root: string, extra: Record<string, string> = {}): void {
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(join(root, 'index.html'), HTML);
  writeFileSync(join(root, 'assets', 'index-abc.js'), JS);
  for (const [name, body] of Object.entries(extra)) writeFileSync(join(root, name), body);
}

async function serve(origins: string[] = []): Promise<FastifyInstance> {
  dir = mkdtempSync(join(tmpdir(), 'mediagen-console-route-'));
  app = Fastify();
  registerErrorHandling(app);
  registerConsoleRoutes(app, { dir, mediaOrigins: async () => origins });
  await app.ready();
  return app;
}

describe('the /console route', () => {
  it('answers index.html for every page path, redirects /console to /console/, and 404s a missing asset', async () => {
    const a = await serve();
    build(dir!);
    for (const path of ['/console/', '/console/jobs', '/console/jobs/0b9f6f0e', '/console/usage?from=2026-11-01']) {
      const res = await a.inject(path);
      expect(res.statusCode, path).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toBe(HTML);
    }
    const bare = await a.inject('/console');
    expect(bare.statusCode).toBe(308);
    expect(bare.headers.location).toBe('/console/');
    expect((await a.inject('/console?from=2026-11-01')).headers.location).toBe('/console/?from=2026-11-01');
    const missing = await a.inject('/console/assets/gone-123.js');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: 'no console file at /console/assets/gone-123.js' });
  });

  it('serves hashed assets gzipped when asked, cached for a year, and answers 304 to their ETag', async () => {
    const a = await serve();
    build(dir!);
    const zipped = await a.inject({ url: '/console/assets/index-abc.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(zipped.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(zipped.headers.vary).toBe('accept-encoding');
    expect(gunzipSync(zipped.rawPayload).toString()).toBe(JS);
    const plain = await a.inject('/console/assets/index-abc.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(JS);
    const again = await a.inject({ url: '/console/assets/index-abc.js', headers: { 'if-none-match': String(plain.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    // A list of tags, or the weak form of the same tag, matches too.
    const listed = await a.inject({ url: '/console/assets/index-abc.js', headers: { 'if-none-match': `"other", W/${String(plain.headers.etag)}` } });
    expect(listed.statusCode).toBe(304);
  });

  it('puts the media origins and the build’s style hashes in the Content-Security-Policy, and does not serve csp.json', async () => {
    const a = await serve(['https://media.example.com', 'https://bucket.s3.example.com']);
    build(dir!, { 'csp.json': JSON.stringify({ 'style-src': [HASH, "'unsafe-inline'", 'https://evil.example'] }) });
    const res = await a.inject('/console/');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("img-src 'self' https://media.example.com https://bucket.s3.example.com blob: data:");
    expect(csp).toContain("media-src 'self' https://media.example.com https://bucket.s3.example.com blob:");
    expect(csp).toContain("connect-src 'self' https://media.example.com https://bucket.s3.example.com blob: data:");
    // Only well-formed hashes are taken from the build's file: never a keyword or a source.
    expect(csp).toContain(`style-src 'self' ${HASH};`);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('evil.example');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect((await a.inject('/console/csp.json')).body).toBe(HTML);
  });

  it('says the console is not built until it is, then serves it without a restart', async () => {
    const a = await serve();
    const before = await a.inject('/console/');
    expect(before.statusCode).toBe(404);
    expect(before.json()).toEqual({ error: 'the web console is not built on this server; run npm run build' });
    build(dir!);
    expect((await a.inject('/console/')).body).toBe(HTML);
  });

  it('refuses inline script and JavaScript eval in every policy it writes', () => {
    const csp = consolePolicy(['https://media.example.com'], [HASH]);
    expect(csp).toMatch(/(^|; )script-src 'self' 'wasm-unsafe-eval'(;|$)/);
    expect(csp).not.toMatch(/'unsafe-inline'|'unsafe-eval'/);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'none'");
  });
});
