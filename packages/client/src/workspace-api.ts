/**
 * The workspace's own settings through the public API (docs/clients.md): who the token acts as and
 * what it can spend, its API tokens, and its webhooks (signing secret, deliveries).
 */
import type { RequestOptions } from './create.js';
import type { Transport } from './http.js';
import { pages } from './pages.js';
import type {
  ApiToken,
  ApiTokenLimits,
  CreatedApiToken,
  WebhookDeliveryPage,
  WebhookDeliveryQuery,
  WebhookSecret,
  WorkspaceInfo,
  WorkspaceWebhookDelivery,
} from './types.js';

const signalOf = (o?: RequestOptions) => o?.signal;

export class WorkspaceApi {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** The token's workspace, its member and role, the API balance (held, available) and the job limits. */
  async get(opts?: RequestOptions): Promise<WorkspaceInfo> {
    return (await this.#t.json<WorkspaceInfo>({ method: 'GET', path: '/workspace', signal: signalOf(opts) })).body;
  }
}

/** API tokens: owners and admins only (others get a 403 MediagenError). */
export class Tokens {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** Every token of the workspace, revoked ones included, newest first; `current` marks the client's own. */
  async list(opts?: RequestOptions): Promise<ApiToken[]> {
    return (await this.#t.json<{ items: ApiToken[] }>({ method: 'GET', path: '/tokens', signal: signalOf(opts) })).body.items;
  }

  /**
   * Creates a token of the calling member; `secret` is the token itself, shown in this answer
   * only. Not retried after a network error (a retry could make a second token). `limits` are its
   * own, fixed for its life (docs/routing.md, "Token budgets").
   */
  async create(name: string, opts?: RequestOptions & { limits?: ApiTokenLimits }): Promise<CreatedApiToken> {
    return (await this.#t.json<CreatedApiToken>({ method: 'POST', path: '/tokens', json: { name, ...opts?.limits }, signal: signalOf(opts) })).body;
  }

  /** Revokes a token (idempotent: a revoked one answers its first `revoked_at`). */
  async revoke(id: string, opts?: RequestOptions): Promise<ApiToken> {
    return (await this.#t.json<ApiToken>({ method: 'POST', path: `/tokens/${encodeURIComponent(id)}/revoke`, signal: signalOf(opts) })).body;
  }
}

export class Webhooks {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** The signing secret (owners and admins). */
  async secret(opts?: RequestOptions): Promise<WebhookSecret> {
    return (await this.#t.json<WebhookSecret>({ method: 'GET', path: '/workspace/webhook-secret', signal: signalOf(opts) })).body;
  }

  /** A new signing secret; the previous one also signs for 24 hours (owners and admins). */
  async rotateSecret(opts?: RequestOptions): Promise<WebhookSecret> {
    return (await this.#t.json<WebhookSecret>({ method: 'POST', path: '/workspace/webhook-secret/rotate', signal: signalOf(opts) })).body;
  }

  /** One page of the workspace's deliveries, newest first; pass its `next_cursor` as `cursor` for the next. */
  async deliveries(query: WebhookDeliveryQuery & RequestOptions = {}): Promise<WebhookDeliveryPage> {
    const { signal, ...q } = query;
    return (await this.#t.json<WebhookDeliveryPage>({ method: 'GET', path: '/webhook-deliveries', query: q, signal })).body;
  }

  /** Every delivery, newest first, across all pages (`limit` is the page size). */
  iterateDeliveries(query: Omit<WebhookDeliveryQuery, 'cursor'> & RequestOptions = {}): AsyncGenerator<WorkspaceWebhookDelivery, void, undefined> {
    return pages((cursor) => this.deliveries({ ...query, ...(cursor ? { cursor } : {}) }));
  }
}
