import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import sharp from 'sharp';

/**
 * A ComfyUI server on loopback, written from Comfy-Org/ComfyUI's `server.py` (routes `POST /prompt`
 * answering `{prompt_id, number, node_errors}` or 400 `{error: {type, message, details, extra_info},
 * node_errors: {<id>: {errors: [{type, message, details, extra_info}], dependent_outputs, class_type}}}`,
 * `GET /queue` `{queue_running, queue_pending}` of `[number, prompt_id, prompt, extra_data, outputs]`,
 * `POST /queue {"delete": [...]}`, `POST /interrupt` (with `{prompt_id}` only interrupting that
 * prompt when it runs, since v0.3.57; before that, whatever runs), `GET /history/{id}`,
 * `GET /history?max_items=&offset=` (execution.py `get_history`: `offset` from the oldest entry,
 * since v0.3.60; without it, the newest `max_items`), `GET /system_stats` (`system.comfyui_version`),
 * `POST /upload/image` answering `{name, subfolder, type}`, `GET /view?filename=&subfolder=&type=`,
 * `GET /ws?clientId=` sending JSON `{type, data}` to the prompt's client only) and `execution.py`
 * (messages `execution_start`, `executing`, `progress` {value, max, prompt_id, node}, `executed`,
 * `execution_success`, `execution_error` {prompt_id, node_id, node_type, exception_message,
 * exception_type, traceback, ...}, `execution_interrupted`; the history entry `{prompt, outputs,
 * status: {status_str, completed, messages}, meta}`; before 2024-01-11 `{prompt, outputs}` only,
 * ending with `executing {node: null}` as every version does after writing the history entry).
 * Prompts queued from ComfyUI's web UI carry `extra_data.extra_pnginfo.workflow`, the whole UI
 * workflow: `addWebUiPrompts` puts such prompts in the queue or the history.
 */

/** How the server treats a client's `prompt_id`: ignore it and mint one (before v0.3.45), or take it, duplicates and all (v0.3.45 on; no version refuses one). */
export type PromptIdMode = 'mint' | 'duplicates';

export interface FakeComfyOptions {
  readonly promptIds?: PromptIdMode;
  readonly websocket?: boolean;
  /** Prompts stay queued until `start()`. */
  readonly holdQueue?: boolean;
  /** A running prompt stops after its first progress step until `release()`. */
  readonly holdRunning?: boolean;
  /** `POST /interrupt` ignores its body and interrupts whatever runs (before v0.3.57: /system_stats says 0.3.56). */
  readonly oldInterrupt?: boolean;
  /** ComfyUI before 2024-01-11: history entries without `status`, no `execution_success`, no version in /system_stats, interrupt ignores its body. */
  readonly statusless?: boolean;
  /** Each socket message arrives this much later (a slow proxy): the history can show an end first. */
  readonly socketDelayMs?: number;
  readonly executionError?: { readonly node_id: string; readonly node_type: string; readonly exception_message: string; readonly exception_type: string };
  /** POST /prompt answers 400 with this body. */
  readonly rejectWith?: unknown;
  /** Bytes every SaveImage file is served as (else a real PNG). */
  readonly outputBytes?: Buffer;
  readonly steps?: number;
  /** The first this many `POST /prompt` are queued but their answer is lost (the connection drops). */
  readonly loseAnswers?: number;
}

type QueueItem = [number, string, Record<string, { class_type: string; inputs: Record<string, unknown> }>, { client_id?: string; extra_pnginfo?: unknown }, string[]];

export class FakeComfyui {
  readonly uploads: Array<{ name: string; type: string; bytes: Buffer }> = [];
  readonly prompts: Array<{ prompt_id: string | undefined; client_id: string | undefined; prompt: QueueItem[2] }> = [];
  readonly interrupts: Array<string | undefined> = [];
  readonly deletes: string[] = [];
  /** Every request, `METHOD /path?query`, in order. */
  readonly requests: string[] = [];
  readonly pending: QueueItem[] = [];
  running: QueueItem | undefined;
  readonly history = new Map<string, Record<string, unknown>>();
  readonly files = new Map<string, Buffer>();
  readonly #sockets = new Map<string, Socket>();
  readonly #server: Server;
  #number = 0;
  #answers = 0;
  #release: (() => void) | undefined;
  #interrupted = false;
  baseUrl = '';
  /** While it answers true for a request, the server answers 503 (a proxy in front of a ComfyUI that restarts). */
  down: ((method: string, path: string) => boolean) | undefined;

  constructor(readonly opts: FakeComfyOptions = {}) {
    this.#server = createServer((req, res) => void this.#handle(req, res).catch(() => res.writeHead(500).end()));
    this.#server.on('upgrade', (req: IncomingMessage, socket: Socket) => this.#upgrade(req, socket));
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.baseUrl = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.#release?.();
    for (const s of this.#sockets.values()) s.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }

  /** Starts the queue when `holdQueue`. */
  run(): void {
    void this.#next(true);
  }

  /** Lets a held running prompt finish. */
  release(): void {
    this.#release?.();
  }

  /**
   * Prompts as ComfyUI's web UI queues them (another client id, `extra_pnginfo` carrying a UI
   * workflow of about `bytes`): `pending` ones wait behind whatever runs (they never start unless
   * `holdQueue` is off and the queue runs), `history` ones are finished entries.
   */
  addWebUiPrompts(count: number, where: 'pending' | 'history', bytes = 100_000): void {
    const workflow = webUiWorkflow(bytes);
    for (let i = 0; i < count; i++) {
      const item: QueueItem = [this.#number++, randomUUID(), { '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 0 } } }, { client_id: 'web-ui-browser', extra_pnginfo: { workflow } }, ['9']];
      if (where === 'pending') this.pending.push(item);
      else this.history.set(item[1], { prompt: item, outputs: {}, status: { status_str: 'success', completed: true, messages: [] }, meta: {} });
    }
  }

  /** Drops every WebSocket (ComfyUI restarted behind a proxy, a network blip). */
  dropSockets(): void {
    for (const s of this.#sockets.values()) s.destroy();
    this.#sockets.clear();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (this.down?.(req.method ?? 'GET', url.pathname)) return res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unavailable');
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const parse = (): Record<string, unknown> => {
      try {
        return JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        return {};
      }
    };
    if (req.method === 'POST' && url.pathname === '/prompt') return this.#postPrompt(parse(), json, () => res.destroy());
    if (req.method === 'GET' && url.pathname === '/system_stats') {
      const version = this.opts.statusless ? {} : { comfyui_version: this.opts.oldInterrupt ? '0.3.56' : '0.3.64' };
      return json(200, { system: { os: 'posix', ...version, python_version: '3.12.3' }, devices: [] });
    }
    if (req.method === 'GET' && url.pathname === '/queue') return json(200, { queue_running: this.running ? [this.running] : [], queue_pending: this.pending });
    if (req.method === 'POST' && url.pathname === '/queue') {
      const del = parse().delete;
      for (const id of Array.isArray(del) ? del : []) {
        this.deletes.push(String(id));
        const i = this.pending.findIndex((p) => p[1] === id);
        if (i >= 0) this.pending.splice(i, 1);
      }
      return json(200, {});
    }
    if (req.method === 'POST' && url.pathname === '/interrupt') {
      const id = this.opts.oldInterrupt || this.opts.statusless ? undefined : (parse().prompt_id as string | undefined);
      this.interrupts.push(id);
      if (this.running && (id === undefined || id === this.running[1])) {
        this.#interrupted = true;
        this.#release?.();
      }
      return res.writeHead(200).end();
    }
    const hist = /^\/history(?:\/(.+))?$/.exec(url.pathname);
    if (req.method === 'GET' && hist) {
      if (hist[1]) {
        const entry = this.history.get(decodeURIComponent(hist[1]));
        return json(200, entry ? { [decodeURIComponent(hist[1])]: entry } : {});
      }
      return json(200, Object.fromEntries(this.#historyPage(url.searchParams)));
    }
    if (req.method === 'POST' && url.pathname === '/upload/image') {
      const form = await new Request('http://x', { method: 'POST', headers: req.headers as Record<string, string>, body: raw }).formData();
      const image = form.get('image');
      if (!(image instanceof Blob) || form.get('type') !== 'input') return res.writeHead(400).end();
      const name = (image as File).name;
      this.uploads.push({ name, type: image.type, bytes: Buffer.from(await image.arrayBuffer()) });
      return json(200, { name, subfolder: '', type: 'input' });
    }
    if (req.method === 'GET' && url.pathname === '/view') {
      const file = this.files.get(`${url.searchParams.get('type')}/${url.searchParams.get('subfolder')}/${url.searchParams.get('filename')}`);
      if (!file) return res.writeHead(404).end();
      return res.writeHead(200, { 'content-type': 'image/png', 'content-length': file.length }).end(file);
    }
    res.writeHead(404).end();
  }

  /** execution.py `get_history(max_items, offset)`: `offset` from the oldest (v0.3.60 on); without one, the newest `max_items`. */
  #historyPage(q: URLSearchParams): Array<[string, Record<string, unknown>]> {
    const all = [...this.history];
    const max = q.has('max_items') ? Number(q.get('max_items')) : undefined;
    let offset = q.has('offset') && !this.opts.statusless && !this.opts.oldInterrupt ? Number(q.get('offset')) : -1;
    if (offset < 0 && max !== undefined) offset = all.length - max;
    const from = all.slice(Math.max(0, offset));
    return max === undefined ? from : from.slice(0, max);
  }

  #postPrompt(body: Record<string, unknown>, json: (status: number, body: unknown) => void, lose: () => void): void {
    this.#answers++;
    const prompt = body.prompt as QueueItem[2];
    const given = typeof body.prompt_id === 'string' ? body.prompt_id : undefined;
    const clientId = typeof body.client_id === 'string' ? body.client_id : undefined;
    this.prompts.push({ prompt_id: given, client_id: clientId, prompt });
    if (this.opts.rejectWith !== undefined) return json(400, this.opts.rejectWith);
    const id = this.opts.promptIds === 'mint' || !given ? randomUUID() : given;
    const outputs = Object.entries(prompt).filter(([, n]) => n.class_type === 'SaveImage' || n.class_type === 'PreviewImage').map(([k]) => k);
    const item: QueueItem = [this.#number++, id, prompt, clientId ? { client_id: clientId } : {}, outputs];
    this.pending.push(item);
    if (this.#answers <= (this.opts.loseAnswers ?? 0)) lose();
    else json(200, { prompt_id: id, number: item[0], node_errors: {} });
    if (!this.opts.holdQueue) setImmediate(() => void this.#next(false));
  }

  async #next(force: boolean): Promise<void> {
    if (this.running || this.pending.length === 0 || (this.opts.holdQueue && !force)) return;
    const item = this.pending.shift()!;
    this.running = item;
    const [, id, prompt, extra] = item;
    const send = (type: string, data: Record<string, unknown>) => this.#send(extra.client_id, type, { ...data, prompt_id: id });
    const messages: unknown[] = [['execution_start', { prompt_id: id, timestamp: Date.now() }]];
    send('execution_start', { timestamp: Date.now() });
    const steps = this.opts.steps ?? 4;
    const sampler = Object.keys(prompt).find((k) => prompt[k]!.class_type === 'KSampler') ?? Object.keys(prompt)[0]!;
    send('executing', { node: sampler, display_node: sampler });
    send('progress', { value: 1, max: steps, node: sampler });
    if (this.opts.holdRunning) await new Promise<void>((r) => (this.#release = r));
    this.#release = undefined;
    const entry = (status_str: string, outputs: Record<string, unknown>) => (this.opts.statusless ? { prompt: item, outputs } : { prompt: item, outputs, status: { status_str, completed: status_str === 'success', messages }, meta: {} });
    if (this.#interrupted) {
      this.#interrupted = false;
      const data = { prompt_id: id, node_id: sampler, node_type: 'KSampler', executed: [] };
      messages.push(['execution_interrupted', data]);
      send('execution_interrupted', data);
      this.history.set(id, entry('error', {}));
    } else if (this.opts.executionError) {
      const data = { ...this.opts.executionError, prompt_id: id, traceback: ['  File "/opt/ComfyUI/execution.py", line 1'], executed: [], current_inputs: {}, current_outputs: {}, timestamp: Date.now() };
      messages.push(['execution_error', data]);
      send('execution_error', data);
      this.history.set(id, entry('error', {}));
    } else {
      for (let v = 2; v <= steps; v++) {
        // Sampling takes time: the steps' messages reach the socket before the history has the result.
        await new Promise((r) => setTimeout(r, 5));
        send('progress', { value: v, max: steps, node: sampler });
      }
      const outputs: Record<string, unknown> = {};
      for (const [node, n] of Object.entries(prompt)) {
        if (n.class_type !== 'SaveImage' && n.class_type !== 'PreviewImage') continue;
        const type = n.class_type === 'SaveImage' ? 'output' : 'temp';
        const filename = `ComfyUI_${String(this.files.size + 1).padStart(5, '0')}_.png`;
        const bytes = this.opts.outputBytes ?? (await sharp({ create: { width: 64, height: 48, channels: 3, background: type === 'output' ? '#3366cc' : '#999999' } }).png().toBuffer());
        this.files.set(`${type}//${filename}`, bytes);
        outputs[node] = { images: [{ filename, subfolder: '', type }] };
        send('executed', { node, display_node: node, output: outputs[node] });
      }
      messages.push(['execution_success', { prompt_id: id, timestamp: Date.now() }]);
      this.history.set(id, entry('success', outputs));
      if (!this.opts.statusless) send('execution_success', { timestamp: Date.now() });
    }
    // main.py prompt_worker: after task_done, the prompt's last message.
    send('executing', { node: null });
    this.running = undefined;
    void this.#next(false);
  }

  #upgrade(req: IncomingMessage, socket: Socket): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const key = req.headers['sec-websocket-key'];
    if (!this.opts.websocket || url.pathname !== '/ws' || typeof key !== 'string') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const sid = url.searchParams.get('clientId') ?? randomUUID().replace(/-/g, '');
    const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    this.#sockets.set(sid, socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.#sockets.get(sid) === socket && this.#sockets.delete(sid));
    socket.on('data', (d: Buffer) => {
      if ((d[0]! & 0x0f) === 0x8) socket.end(Buffer.from([0x88, 0]));
    });
    this.#send(sid, 'status', { status: { exec_info: { queue_remaining: this.pending.length } }, sid });
  }

  /** A text frame to the client `sid` (server.py `send_json` to `sid`: only the prompt's own client). */
  #send(sid: string | undefined, type: string, data: Record<string, unknown>): void {
    const delay = this.opts.socketDelayMs ?? 0;
    if (delay > 0) {
      setTimeout(() => this.#write(sid, type, data), delay);
      return;
    }
    this.#write(sid, type, data);
  }

  #write(sid: string | undefined, type: string, data: Record<string, unknown>): void {
    const socket = sid === undefined ? undefined : this.#sockets.get(sid);
    if (!socket || socket.destroyed) return;
    const payload = Buffer.from(JSON.stringify({ type, data }));
    const head = payload.length < 126 ? Buffer.from([0x81, payload.length]) : payload.length < 65536 ? Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff]) : Buffer.concat([Buffer.from([0x81, 127]), bigLength(payload.length)]);
    socket.write(Buffer.concat([head, payload]));
  }
}

function bigLength(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/** A UI-format workflow as the web UI saves it in `extra_pnginfo` (`nodes`, `links`, widget values), about `bytes` long. */
function webUiWorkflow(bytes: number): Record<string, unknown> {
  const nodes: unknown[] = [];
  for (let i = 0; JSON.stringify(nodes).length < bytes; i++) {
    nodes.push({ id: i, type: 'CLIPTextEncode', pos: [i * 10, 200], size: [400, 200], flags: {}, order: i, mode: 0, inputs: [{ name: 'clip', type: 'CLIP', link: i }], outputs: [{ name: 'CONDITIONING', type: 'CONDITIONING', links: [i + 1] }], properties: { 'Node name for S&R': 'CLIPTextEncode' }, widgets_values: [`a "quoted" prompt \\ with escapes, node ${i}: ${'lorem ipsum '.repeat(20)}`] });
  }
  return { last_node_id: nodes.length, last_link_id: nodes.length, nodes, links: [], groups: [], config: {}, extra: { ds: { scale: 1, offset: [0, 0] } }, version: 0.4 };
}
