import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { msToMicros } from '../lib/time.js';
import { DomainError, invalid, notFound } from '../domain/errors.js';
import { checkWebhookUrl } from '../domain/webhook-url.js';
import { applyAliases } from '../models/aliases.js';
import { isAvailable } from '../models/catalog.js';
import type { Catalog, CatalogEntry } from '../models/catalog.js';
import { sunsetError } from '../models/deprecation.js';
import { refusePrivateUrls, urlInputsOf } from '../models/private-urls.js';
import type { BodyValidator } from '../models/validation.js';
import type { Store } from '../store/store.js';
import { admit, lockExisting } from './admission.js';
import { assetInputsOf, checkAssetInputs } from './asset-inputs.js';
import type { AssetInput } from './asset-inputs.js';
import type { BillingService } from './billing.js';
import { Idempotency } from './idempotency.js';
import type { HeldKey } from './idempotency.js';
import type { AuthContext } from './identity.js';
import { toCreatedJobView } from './job-view.js';
import type { CreatedJobView } from './job-view.js';

/** Seconds a caller refused with too_many_jobs should wait: about one short job's time. */
export const FULL_RETRY_AFTER_S = 5;

const tooManyJobs = () =>
  new DomainError(
    'too_many_jobs',
    'too many jobs: the workspace is running its maximum number of concurrent jobs and its backlog is full; retry later',
    { retryAfterSeconds: FULL_RETRY_AFTER_S },
  );

/** What the caller asks for beside the body (HTTP sends these as headers). */
export interface GenerationOptions {
  /** As the caller sent it, unchecked: the use case applies the webhook URL rules. */
  readonly webhookUrl: string | null;
  /** Whether the caller asked for zero data retention; only some models offer it. */
  readonly zeroDataRetention: boolean;
  /** Makes a retry safe (docs/errors.md); its shape was checked by the transport. */
  readonly idempotencyKey: string | null;
}

/** How the caller's transport names the options, so a refusal names what the client sent. */
export interface OptionLabels {
  readonly webhookUrl: string;
  readonly zeroDataRetention: string;
}

/** The server's settings a transport passes with each request. */
export interface GenerationPolicy {
  /** `--allow-private-urls`: when false, literal private and loopback URLs are refused at once. */
  readonly allowPrivateUrls: boolean;
  /** The server's public URL, which a sunset model's migration link is resolved against. */
  readonly publicUrl: string;
  readonly labels: OptionLabels;
}

export interface GenerationRequest {
  /** The model path, also the job `type`: `image/vendor-a/model-a-2/medium`. */
  readonly model: string;
  /** The body as received (parsed JSON, unchecked); validated here, defaults filled in. */
  readonly body: unknown;
  readonly caller: AuthContext;
  readonly options: GenerationOptions;
}

/** A new job, or the first answer to the same idempotency key (`replayed`). */
export interface CreatedJob {
  readonly job: CreatedJobView;
  readonly replayed: boolean;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The use case "create a generation job", for every transport (HTTP, the MCP tool generate, and
 * node-app steps). Refusals are DomainErrors; the order of the checks is the API's precedence:
 * sunset, aliases, body, webhook URL, zero data retention, private URLs, then the key, the
 * balance and the workspace's limits.
 */
export class GenerationService {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #catalog: Catalog;
  readonly #billing: BillingService;
  readonly #idempotency: Idempotency;

  constructor(store: Store, clock: Clock, catalog: Catalog, billing: BillingService) {
    this.#store = store;
    this.#clock = clock;
    this.#catalog = catalog;
    this.#billing = billing;
    this.#idempotency = new Idempotency(store, clock);
  }

  /**
   * The model, if it takes requests now; a retired or sunset model is model_unavailable. A
   * transport may call this before it reads the body, so a sunset answers before anything else.
   */
  available(model: string, publicUrl: string): CatalogEntry {
    const entry = this.#catalog.get(model);
    if (!entry) throw notFound(`model '${model}' not found`);
    // Only a deprecated model can be unavailable (a retired one is deprecated too: catalog.ts).
    if (entry.deprecation && !isAvailable(entry, this.#clock.nowMs())) {
      throw sunsetError(entry.path, entry.deprecation, publicUrl);
    }
    return entry;
  }

  async create(req: GenerationRequest, policy: GenerationPolicy): Promise<CreatedJob> {
    const entry = this.available(req.model, policy.publicUrl);
    const body = this.#checkedBody(entry, req.body);
    const { webhookUrl, zeroDataRetention, idempotencyKey } = req.options;
    if (webhookUrl !== null) checkWebhookUrl(webhookUrl, policy.labels.webhookUrl);
    if (zeroDataRetention && !entry.zeroDataRetention) {
      throw invalid(`${policy.labels.zeroDataRetention} is not supported by ${entry.path}`);
    }
    // The body's URLs, found once. This server's assets among them are read from its store, never
    // fetched: the private-URL rule is not theirs.
    const urls = urlInputsOf(entry.request, body);
    const assets = assetInputsOf(urls);
    const assetUrls = assets.length > 0 ? await checkAssetInputs(this.#store.assets, req.caller.workspace.id, assets, policy.publicUrl) : undefined;
    if (!policy.allowPrivateUrls) {
      refusePrivateUrls(urls, webhookUrl === null ? null : { label: policy.labels.webhookUrl, url: webhookUrl }, assetUrls);
    }
    const named = assets.filter((a) => assetUrls?.has(a.url));
    return this.#admit(req.caller, { entry, body, webhookUrl, zeroDataRetention, idempotencyKey, assets: named }, policy.publicUrl);
  }

  /** Aliases renamed (or refused after their sunset), then strict validation with defaults. */
  #checkedBody(entry: CatalogEntry, received: unknown): Record<string, unknown> {
    let body = received;
    if (entry.aliases.length > 0 && isPlainObject(body)) {
      body = applyAliases(body, entry.aliases, this.#catalog.aliasSunsetDate, this.#catalog.aliasSunsetMs, this.#clock.nowMs());
    }
    // Present on every entry that takes requests (catalog.ts), and `available` let only those through.
    const validate: BodyValidator = entry.validate!;
    validate(body);
    return body;
  }

  /**
   * Admits the job in the same transaction that stores it: its price is held from the available
   * balance (or insufficient_balance), then it is queued or backlogged (or too_many_jobs). A
   * refusal rolls everything back. With an idempotency key, the key is taken first (or its stored
   * answer replayed, in flight, reused), its answer is stored in the job's transaction, and a
   * refusal frees it for a retry.
   */
  async #admit(auth: AuthContext, input: Checked, publicUrl: string): Promise<CreatedJob> {
    if (!input.idempotencyKey) return { job: await this.#insert(auth, input, publicUrl), replayed: false };
    const begun = await this.#idempotency.begin(auth.workspace.id, {
      key: input.idempotencyKey,
      endpoint: `/generate/${input.entry.path}`,
      body: input.body,
      webhookUrl: input.webhookUrl,
      zeroDataRetention: input.zeroDataRetention,
    });
    // The stored answer is the job view as it was created.
    if (begun.kind === 'replay') return { job: begun.body as unknown as CreatedJobView, replayed: true };
    try {
      return { job: await this.#insert(auth, input, publicUrl, begun.held), replayed: false };
    } catch (err) {
      await this.#idempotency.release(begun.held);
      throw err;
    }
  }

  async #insert(auth: AuthContext, input: Checked, publicUrl: string, held?: HeldKey): Promise<CreatedJobView> {
    const now = msToMicros(this.#clock.nowMs());
    const id = newId();
    const price = this.#billing.priceOf(input.entry.path, input.body);
    return this.#store.transaction(async (tx) => {
      const lock = await lockExisting(tx, auth.workspace.id);
      // Again under the lock an asset's DELETE takes: a job is stored only while its assets live.
      if (input.assets.length > 0) await checkAssetInputs(tx.assets, auth.workspace.id, input.assets, publicUrl);
      await this.#billing.hold(tx, lock, { jobId: id, type: input.entry.path, price }, now);
      const status = await admit(tx, lock, now);
      if (!status) throw tooManyJobs();
      if (status === 'queued') await tx.queue.notify({ kind: 'queued' });
      const inserted = await tx.jobs.insertJob(
        {
          id,
          workspaceId: auth.workspace.id,
          apiUserId: auth.apiUserId,
          type: input.entry.path,
          status,
          request: input.body,
          webhookUrl: input.webhookUrl,
          zeroDataRetention: input.zeroDataRetention,
        },
        now,
      );
      const view = toCreatedJobView(inserted);
      if (held) await this.#idempotency.complete(tx, held, inserted.id, view);
      return view;
    });
  }
}

/** A request that passed every check, about to be admitted. */
interface Checked {
  readonly entry: CatalogEntry;
  readonly body: Readonly<Record<string, unknown>>;
  readonly webhookUrl: string | null;
  readonly zeroDataRetention: boolean;
  readonly idempotencyKey: string | null;
  /** The body's URLs that name this workspace's assets. */
  readonly assets: readonly AssetInput[];
}
