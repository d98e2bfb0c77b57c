/**
 * A fake OpenAI Images API on loopback, written from OpenAI's public reference:
 * - https://platform.openai.com/docs/api-reference/images (POST /v1/images/generations as JSON,
 *   POST /v1/images/edits as multipart/form-data with `image` or `image[]` parts and `mask`;
 *   the ImagesResponse `{created, data: [{b64_json | url, revised_prompt}], usage}`)
 * - https://platform.openai.com/docs/guides/error-codes (error bodies `{error: {message, type, param, code}}`,
 *   401 invalid_api_key, 429 with Retry-After, 500 server_error)
 * - openai/openai-node `src/resources/images.ts` (gpt-image-1 always answers b64_json and reports
 *   `usage` with `input_tokens_details`; dall-e answers `url` unless `response_format: b64_json`).
 *
 * Answers a small real PNG (made with sharp) as base64 by default, or as URLs when the request asks
 * `response_format: url` or `answer: 'url'` is set: served, as OpenAI's are (from Azure blob
 * storage), by a file host apart from the API (`fileHost`, fake-file-host.ts: `/files/<n>.png`).
 * Every request is recorded, with its headers (tests check the Authorization header) and its body
 * parsed (JSON, or the multipart fields and files).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { startFakeFileHost } from './fake-file-host.js';
import type { FakeFileHost } from './fake-file-host.js';

export interface FakeOpenAiFile {
  readonly field: string;
  readonly name: string;
  readonly type: string;
  readonly bytes: Buffer;
}

export interface FakeOpenAiRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** JSON body; for multipart, the text fields (repeated names as arrays). */
  readonly body: unknown;
  /** Multipart file parts, in order. */
  readonly files: readonly FakeOpenAiFile[];
}

/** One scripted answer to the next image call, in place of the normal one. */
export type FakeOpenAiReply =
  | { readonly kind: 'status'; readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> }
  | { readonly kind: 'raw'; readonly status: number; readonly text: string; readonly contentType?: string };

export interface FakeOpenAiOptions {
  /** The key the fake accepts as `Authorization: Bearer <key>`; others get OpenAI's 401. Default `sk-test-openai-key`. */
  readonly apiKey?: string;
  /** `b64_json` (default: what gpt-image-1 answers) or `url`; a request's own `response_format` wins. */
  readonly answer?: 'b64_json' | 'url';
  /** Output URLs to answer instead of the fake's own (a private address, an oversized file...). */
  readonly outputUrls?: readonly string[];
  /** Whether to report `usage` (default: for gpt-image models only, as OpenAI does). */
  readonly usage?: boolean;
}

export interface FakeOpenAi {
  /** The root, without `/v1` (`http://127.0.0.1:<port>`): the API is at `${url}/v1`. */
  readonly url: string;
  readonly apiKey: string;
  /** The PNG the fake answers, and serves at `${fileHost.url}/files/<n>.png`. */
  readonly png: Buffer;
  /** The file host `url` answers point at (another address than the API's). */
  readonly fileHost: FakeFileHost;
  readonly requests: FakeOpenAiRequest[];
  /** Output URLs answered instead of the fake's own (options.outputUrls); settable between calls. */
  outputUrls: readonly string[] | undefined;
  /** Image calls received (generations and edits), whatever their answer. */
  submissions: number;
  /** Image calls whose client went away before the answer (the engine's abort: its only "cancel"). */
  aborted: number;
  /** The next `n` image calls answer 429 with `Retry-After: <seconds>`. */
  fail429(n?: number, retryAfterSeconds?: number): void;
  /** The next `n` image calls answer 500 server_error. */
  fail500(n?: number): void;
  /** The next `n` image calls answer 200 with a body that is not JSON. */
  failMalformed(n?: number): void;
  /** The next image call is refused with OpenAI's error body (400 invalid_request_error by default). */
  reject(message: string, opts?: { status?: number; type?: string; code?: string | null; param?: string | null }): void;
  /** The next image call answers this JSON with 200 (a missing `data`, an empty one...). */
  answerNext(body: unknown): void;
  /** The next image call answers `status` with OpenAI's error body and these headers (`retry-after-ms`, `x-should-retry`). */
  answerError(status: number, error: { message: string; type: string; code: string | null }, headers?: Record<string, string>): void;
  /** Holds every image call unanswered until `release()` (a slow generation; the engine's timeout). */
  hold(): void;
  release(): void;
  /** Serves `bytes` at `${url}${path}` (an oversized output, another media type). */
  serve(path: string, bytes: Buffer, contentType?: string): void;
  close(): Promise<void>;
}

const IMAGE_PATH = /^(?:\/v1)?\/images\/(generations|edits)$/;

export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  const apiKey = options.apiKey ?? 'sk-test-openai-key';
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#2060d0' } }).png().toBuffer();
  const fileHost = await startFakeFileHost();
  for (let i = 1; i <= 10; i++) fileHost.serve(`/files/${i}.png`, png);
  const served = new Map<string, { bytes: Buffer; type: string }>();
  const script: FakeOpenAiReply[] = [];
  let held: Array<() => void> | undefined;

  const error = (status: number, message: string, type: string, code: string | null, param: string | null = null): FakeOpenAiReply => ({
    kind: 'status',
    status,
    body: { error: { message, type, param, code } },
  });

  async function handleImages(req: IncomingMessage, res: ServerResponse, kind: string, raw: Buffer): Promise<void> {
    res.on('close', () => {
      if (!res.writableEnded) fake.aborted++;
    });
    const parsed = await parseBody(req, raw);
    const record: FakeOpenAiRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: parsed.body, files: parsed.files };
    fake.requests.push(record);
    fake.submissions++;
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      const shown = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      return reply(res, error(401, `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`, 'invalid_request_error', 'invalid_api_key'));
    }
    if (held) await new Promise<void>((resolve) => held?.push(resolve) ?? resolve());
    if (res.destroyed) return;
    const scripted = script.shift();
    if (scripted) return reply(res, scripted);
    const body = (parsed.body ?? {}) as Record<string, unknown>;
    if (typeof body.prompt !== 'string' || body.prompt === '') return reply(res, error(400, "Missing required parameter: 'prompt'.", 'invalid_request_error', 'missing_required_parameter', 'prompt'));
    if (kind === 'edits' && parsed.files.filter((f) => f.field === 'image' || f.field === 'image[]').length === 0) {
      return reply(res, error(400, "Missing required parameter: 'image'.", 'invalid_request_error', 'missing_required_parameter', 'image'));
    }
    const model = typeof body.model === 'string' ? body.model : 'dall-e-2';
    const n = Math.max(1, Math.min(10, Number(body.n ?? 1) || 1));
    const urls = fake.outputUrls;
    const format = body.response_format ?? (urls ? 'url' : (options.answer ?? 'b64_json'));
    const data = Array.from({ length: n }, (_, i) =>
      format === 'url' ? { url: urls?.[i % urls.length] ?? `${fileHost.url}/files/${i + 1}.png` } : { b64_json: png.toString('base64') },
    );
    const usage =
      (options.usage ?? model.startsWith('gpt-image'))
        ? { input_tokens: 50, input_tokens_details: { image_tokens: kind === 'edits' ? 40 : 0, text_tokens: 10 }, output_tokens: 272 * n, total_tokens: 50 + 272 * n }
        : undefined;
    reply(res, { kind: 'status', status: 200, body: { created: Math.floor(Date.now() / 1000), data, ...(usage ? { usage } : {}) } });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const image = IMAGE_PATH.exec(path);
      if (req.method === 'POST' && image) {
        handleImages(req, res, image[1]!, raw).catch((err: unknown) => reply(res, error(400, `could not parse the body: ${String(err)}`, 'invalid_request_error', null)));
        return;
      }
      fake.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: undefined, files: [] });
      const file = served.get(path);
      if (req.method === 'GET' && file) {
        res.writeHead(200, { 'content-type': file.type, 'content-length': file.bytes.length }).end(file.bytes);
        return;
      }
      reply(res, error(404, `Invalid URL (${req.method} ${path})`, 'invalid_request_error', null));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');

  const fake: FakeOpenAi = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey,
    png,
    fileHost,
    requests: [],
    outputUrls: options.outputUrls,
    submissions: 0,
    aborted: 0,
    fail429(n = 1, retryAfterSeconds = 1) {
      for (let i = 0; i < n; i++) {
        script.push({ ...error(429, 'Rate limit reached for images per minute. Please try again later.', 'requests', 'rate_limit_exceeded'), headers: { 'retry-after': String(retryAfterSeconds) } } as FakeOpenAiReply);
      }
    },
    fail500(n = 1) {
      for (let i = 0; i < n; i++) script.push(error(500, 'The server had an error while processing your request. Sorry about that!', 'server_error', null));
    },
    failMalformed(n = 1) {
      for (let i = 0; i < n; i++) script.push({ kind: 'raw', status: 200, text: '<html>upstream proxy error</html>', contentType: 'text/html' });
    },
    reject(message, opts = {}) {
      script.push(error(opts.status ?? 400, message, opts.type ?? 'invalid_request_error', opts.code ?? null, opts.param ?? null));
    },
    answerNext(body) {
      script.push({ kind: 'status', status: 200, body });
    },
    answerError(status, err, headers = {}) {
      script.push({ kind: 'status', status, body: { error: { ...err, param: null } }, headers });
    },
    hold() {
      held ??= [];
    },
    release() {
      const waiting = held ?? [];
      held = undefined;
      for (const go of waiting) go();
    },
    serve(path, bytes, contentType = 'image/png') {
      served.set(path, { bytes, type: contentType });
    },
    async close() {
      fake.release();
      await fileHost.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return fake;
}

function reply(res: ServerResponse, r: FakeOpenAiReply): void {
  if (res.writableEnded || res.destroyed) return;
  if (r.kind === 'raw') {
    res.writeHead(r.status, { 'content-type': r.contentType ?? 'text/plain' }).end(r.text);
    return;
  }
  res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers }).end(JSON.stringify(r.body));
}

/** JSON, or multipart parsed by the platform's own `Request.formData()` (undici's parser). */
async function parseBody(req: IncomingMessage, raw: Buffer): Promise<{ body: unknown; files: FakeOpenAiFile[] }> {
  const type = String(req.headers['content-type'] ?? '');
  if (type.startsWith('multipart/form-data')) {
    const form = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(raw) }).formData();
    const fields: Record<string, string | string[]> = {};
    const files: FakeOpenAiFile[] = [];
    for (const [field, value] of form.entries()) {
      if (typeof value === 'string') {
        const had = fields[field];
        fields[field] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
      } else {
        files.push({ field, name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
      }
    }
    return { body: fields, files };
  }
  return { body: raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as unknown) : undefined, files: [] };
}
