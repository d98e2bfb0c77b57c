import { UpstreamError } from '../upstream/upstream-error.js';
import { neverSent, readCappedBody } from '../upstream/upstream-http.js';
import { JsonScanError, JsonScanner } from './comfyui-scan.js';
import type { JsonPath } from './comfyui-scan.js';

/**
 * HTTP to one ComfyUI server (its routes: server.py of Comfy-Org/ComfyUI). Every call ends with
 * the run's signal or after `timeoutMs`. A lost connection, a timeout, a 5xx or a 429 is an
 * UpstreamError `unavailable` (retried by the engine); other statuses are returned to the caller.
 */
export interface ComfyAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** The largest JSON answer read whole (a history entry with its outputs; /queue and /history lists are scanned). */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** The most bytes a scanned answer may have: a long queue of web-UI prompts, streamed, never held. */
const MAX_SCAN_BYTES = 1024 * 1024 * 1024;

export class ComfyHttp {
  constructor(
    readonly baseUrl: string,
    private readonly timeoutMs: number,
    private readonly signal: AbortSignal,
  ) {}

  async #call(method: string, path: string, body: string | FormData | undefined, headers: Record<string, string>): Promise<Response> {
    const signal = AbortSignal.any([this.signal, AbortSignal.timeout(this.timeoutMs)]);
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, { method, body: body ?? null, headers, signal, redirect: 'manual' });
    } catch (err) {
      if (this.signal.aborted) throw this.signal.reason;
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : 'connection failed';
      throw new UpstreamError('unavailable', `ComfyUI ${method} ${path.split('?')[0]}: ${why}`, { cause: err, notSent: neverSent(err) });
    }
    if (res.status >= 500 || res.status === 429) {
      await res.body?.cancel().catch(() => undefined);
      throw new UpstreamError('unavailable', `ComfyUI ${method} ${path.split('?')[0]} answered ${res.status}`, { status: res.status });
    }
    return res;
  }

  /** Reads at most `max` bytes of the answer, else fails `malformed` (the kit's capped reader). */
  #bytes(res: Response, max: number, what: string): Promise<Buffer> {
    return readCappedBody(res, { maxBytes: max, what, signal: this.signal });
  }

  /** A JSON call: the status and the parsed body (undefined when it is not JSON). */
  async json(method: 'GET' | 'POST', path: string, body?: unknown): Promise<ComfyAnswer> {
    const res = await this.#call(method, path, body === undefined ? undefined : JSON.stringify(body), body === undefined ? {} : { 'content-type': 'application/json' });
    const bytes = await this.#bytes(res, MAX_JSON_BYTES, `ComfyUI's answer to ${path.split('?')[0]}`);
    let parsed: unknown;
    try {
      parsed = bytes.length ? JSON.parse(bytes.toString('utf8')) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed };
  }

  /**
   * A GET whose 200 JSON answer is streamed through a JsonScanner: `onString` sees the strings at
   * most `depth` deep, the rest is skipped as it arrives (see comfyui-scan.ts).
   */
  async scan(path: string, depth: number, onString: (path: JsonPath, value: string) => void): Promise<void> {
    const res = await this.#call('GET', path, undefined, {});
    const what = `ComfyUI's answer to ${path.split('?')[0]}`;
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw new UpstreamError('malformed', `ComfyUI answered ${res.status} to GET ${path.split('?')[0]}`);
    }
    const scanner = new JsonScanner(depth, onString);
    let total = 0;
    try {
      for await (const chunk of res.body ?? []) {
        total += (chunk as Uint8Array).length;
        if (total > MAX_SCAN_BYTES) throw new UpstreamError('malformed', `${what} is larger than ${MAX_SCAN_BYTES} bytes`);
        scanner.write(chunk as Uint8Array);
      }
      scanner.end();
    } catch (err) {
      await res.body?.cancel().catch(() => undefined);
      if (this.signal.aborted) throw this.signal.reason;
      if (err instanceof UpstreamError) throw err;
      if (err instanceof JsonScanError) throw new UpstreamError('malformed', `${what} is not JSON: ${err.message}`);
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : 'the connection broke';
      throw new UpstreamError('unavailable', `${what}: ${why}`, { cause: err });
    }
  }

  /** A GET whose answer must be 200 JSON. */
  async getJson(path: string): Promise<unknown> {
    const answer = await this.json('GET', path);
    if (answer.status !== 200 || answer.body === undefined) throw new UpstreamError('malformed', `ComfyUI answered ${answer.status} to GET ${path.split('?')[0]}`);
    return answer.body;
  }

  /**
   * `POST /upload/image` (multipart `image`, `type: input`, `overwrite`): ComfyUI answers
   * `{name, subfolder, type}`; the value a LoadImage input takes is `subfolder/name`.
   */
  async upload(bytes: Buffer, name: string, type: string): Promise<string> {
    const form = new FormData();
    form.set('image', new Blob([bytes], { type }), name);
    form.set('type', 'input');
    form.set('overwrite', 'true');
    const res = await this.#call('POST', '/upload/image', form, {});
    const raw = await this.#bytes(res, 64 * 1024, "ComfyUI's answer to /upload/image");
    let body: { name?: unknown; subfolder?: unknown } | undefined;
    try {
      body = JSON.parse(raw.toString('utf8')) as typeof body;
    } catch {
      body = undefined;
    }
    if (res.status === 400 || res.status === 413) throw new UpstreamError('rejected', `ComfyUI refused the upload of ${name} (${res.status})`, { status: res.status });
    if (res.status !== 200 || typeof body?.name !== 'string' || body.name === '') throw new UpstreamError('malformed', `ComfyUI's answer to /upload/image (${res.status}) names no file`);
    return typeof body.subfolder === 'string' && body.subfolder !== '' ? `${body.subfolder}/${body.name}` : body.name;
  }

  /** `GET /view?filename=&subfolder=&type=`: one output file, at most `maxBytes`. */
  async view(file: { filename: string; subfolder: string; type: string }, maxBytes: number, what: string): Promise<Buffer> {
    const q = new URLSearchParams({ filename: file.filename, subfolder: file.subfolder, type: file.type });
    const res = await this.#call('GET', `/view?${q}`, undefined, {});
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw new UpstreamError('malformed', `${what}: ComfyUI answered ${res.status} to /view`);
    }
    return this.#bytes(res, maxBytes, what);
  }
}
