import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../domain/error-catalogue.js';
import { packageRoot } from '../../lib/package-root.js';

/**
 * The web console (docs/console.md), built by `npm run build` into dist/console and served by
 * every API process at /console: a client of the public API like any script, so it needs no route
 * of its own beyond its files. Any path under /console that is not a file answers index.html, so a
 * page's URL can be reloaded or shared.
 */

/** Where `npm run build` puts the console: dist/console in the package (found when first asked, not at import). */
export const consoleDir = (): string => join(packageRoot(), 'dist', 'console') + sep;

interface ConsoleFile {
  readonly body: Buffer;
  /** The same bytes gzipped, when that is smaller. */
  readonly gzip: Buffer | undefined;
  readonly type: string;
  readonly etag: string;
  /** Vite's hashed assets never change under their name: a browser may keep them for a year. */
  readonly immutable: boolean;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const typeOf = (name: string) => TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** The whole build, read once: it is small, and every request is then a map lookup. */
async function loadConsole(dir: string): Promise<Map<string, ConsoleFile> | undefined> {
  let paths: string[];
  try {
    paths = await filesUnder(dir);
  } catch {
    return undefined;
  }
  const files = new Map<string, ConsoleFile>();
  for (const path of paths) {
    const name = relative(dir, path).split(sep).join('/');
    const body = await readFile(path);
    const type = typeOf(name);
    const zipped = /^(text|application\/json|image\/svg)/.test(type) && body.length > 512 ? gzipSync(body, { level: 9 }) : undefined;
    files.set(name, {
      body,
      gzip: zipped && zipped.length < body.length ? zipped : undefined,
      type,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      immutable: name.startsWith('assets/'),
    });
  }
  return files.has('index.html') ? files : undefined;
}

/** The build's csp.json: hashes of inline styles its libraries insert (console/vite.config.ts). */
function styleHashesOf(files: ReadonlyMap<string, ConsoleFile>): string[] {
  const csp = files.get('csp.json');
  if (!csp) return [];
  const hashes = (JSON.parse(csp.body.toString('utf8')) as { 'style-src'?: unknown })['style-src'];
  return Array.isArray(hashes) ? hashes.filter((h): h is string => typeof h === 'string' && /^'sha256-[A-Za-z0-9+/=]+'$/.test(h)) : [];
}

/** If-None-Match holds a list of tags, weak or strong, or `*` (RFC 9110 13.1.2). */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.trim() === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

export interface ConsoleOptions {
  /** The built console (default consoleDir()). */
  readonly dir?: string;
  /**
   * Origins besides this server's own that the console's pages may load media and data from:
   * the public URL's origin, and the bucket's when output URLs redirect to presigned ones.
   */
  readonly mediaOrigins: () => Promise<readonly string[]>;
}

/**
 * The console's Content-Security-Policy: scripts and styles from this server's files only (no
 * inline script, no eval), media and fetches from this server and the origins its output URLs
 * lead to, no framing, no forms posted elsewhere. For the 3D viewer: 'wasm-unsafe-eval' lets
 * three.js compile its WebAssembly mesh decoder (JavaScript eval stays refused), `styleHashes`
 * admit model-viewer's own shadow-root styles (the build's csp.json), and blob: serves its textures.
 */
export function consolePolicy(origins: readonly string[], styleHashes: readonly string[] = []): string {
  const media = ["'self'", ...origins].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self' 'wasm-unsafe-eval'",
    ["style-src 'self'", ...styleHashes].join(' '),
    `img-src ${media} blob: data:`,
    `media-src ${media} blob:`,
    `connect-src ${media} blob: data:`,
    "font-src 'self'",
    "manifest-src 'self'",
    "worker-src 'self' blob:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

export function registerConsoleRoutes(app: FastifyInstance, opts: ConsoleOptions): void {
  // Read on the first console request, not at start: most processes never serve one.
  let files: Promise<Map<string, ConsoleFile> | undefined> | undefined;
  let policy: Promise<string> | undefined;

  const serve = async (request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
    files ??= loadConsole(opts.dir ?? consoleDir());
    const built = await files;
    if (!built) {
      files = undefined; // built later (npm run build) without a restart: look again next time
      throw notFound('the web console is not built on this server; run npm run build');
    }
    policy ??= opts.mediaOrigins().then(
      (origins) => consolePolicy(origins, styleHashesOf(built)),
      (err: unknown) => {
        policy = undefined;
        throw err;
      },
    );
    const path = request.params['*'] ?? '';
    // A file when there is one; any other path is a page of the console, answered by index.html.
    // A missing asset is a 404, not the page: a stale tab asking for a replaced chunk must fail plainly.
    const file = (path === 'csp.json' ? undefined : built.get(path)) ?? (path.startsWith('assets/') ? undefined : built.get('index.html'));
    if (!file) throw notFound(`no console file at /console/${path}`);
    reply
      .header('content-security-policy', await policy)
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('etag', file.etag)
      .header('vary', 'accept-encoding')
      .type(file.type);
    if (matches(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
    const gzip = file.gzip && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
    if (gzip) reply.header('content-encoding', 'gzip');
    return reply.send(gzip ? file.gzip : file.body);
  };

  const config = { public: true };
  const schema = { hide: true };
  app.get('/console', { config, schema }, (request, reply) => {
    const query = request.url.indexOf('?');
    return reply.redirect(`/console/${query >= 0 ? request.url.slice(query) : ''}`, 308);
  });
  app.get('/console/*', { config, schema }, serve);
}
