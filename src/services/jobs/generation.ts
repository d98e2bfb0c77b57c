import type { CatalogEntry } from '../../models/catalog.js';
import { withRandomSeed } from '../../models/random-seed.js';
import type { RandomSource } from '../../models/random-seed.js';
import type { Store } from '../../store/store.js';
import type { BillingService } from '../billing/billing.js';
import type { AuthContext } from '../identity/identity.js';
import { checkTags } from '../../domain/job-tags.js';
import { checkJobInputs } from './job-inputs.js';
import type { GenerationPolicy } from './job-inputs.js';
import type { JobAdmission } from './job-admission.js';
import type { CreatedJob } from './job-admission.js';
import type { ModelRequests } from '../catalog/model-requests.js';

export { FULL_RETRY_AFTER_S } from './job-admission.js';
export type { CreatedJob } from './job-admission.js';
export type { GenerationPolicy, OptionLabels } from './job-inputs.js';

/** What the caller asks for beside the body (HTTP sends these as headers). */
export interface GenerationOptions {
  /** As the caller sent it, unchecked: the use case applies the webhook URL rules. */
  readonly webhookUrl: string | null;
  /** Whether the caller asked for zero data retention; only some models offer it. */
  readonly zeroDataRetention: boolean;
  /** Makes a retry safe (docs/errors.md); its shape was checked by the transport. */
  readonly idempotencyKey: string | null;
  /** The transport's id of the request (HTTP's X-Request-Id), kept with the job for its log lines. */
  readonly requestId?: string | null;
  /** The job's tags as the caller sent them, unchecked (domain/job-tags.ts); absent: none. */
  readonly tags?: readonly string[];
}

export interface GenerationRequest {
  /** The model path, also the job `type`: `image/vendor-a/model-a-2/medium`. */
  readonly model: string;
  /** The body as received (parsed JSON, unchecked); validated here, defaults filled in. */
  readonly body: unknown;
  readonly caller: AuthContext;
  readonly options: GenerationOptions;
}

/**
 * The use case "create a generation job", for every transport (HTTP, and the MCP tool generate).
 * Refusals are DomainErrors; the order of the checks is the API's precedence: sunset, aliases,
 * body, tags, webhook URL, zero data retention, asset and style ids, private URLs, then the key, the
 * balance and the workspace's limits (job-admission.ts, shared with node-app execution).
 */
export class GenerationService {
  readonly #store: Store;
  readonly #requests: ModelRequests;
  readonly #billing: BillingService;
  readonly #admission: JobAdmission;
  readonly #random: RandomSource;

  /**
   * `admission`: the services' one, shared with node-app execution, so their creates share batches.
   * `random`: where a request without a seed gets its seed (models/random-seed.ts).
   */
  constructor(store: Store, requests: ModelRequests, billing: BillingService, admission: JobAdmission, random: RandomSource = Math.random) {
    this.#store = store;
    this.#random = random;
    this.#requests = requests;
    this.#billing = billing;
    this.#admission = admission;
  }

  /**
   * The model, if it takes requests now; a retired or sunset model is model_unavailable. A
   * transport may call this before it reads the body, so a sunset answers before anything else.
   */
  available(model: string, publicUrl: string): CatalogEntry {
    return this.#requests.available(model, publicUrl);
  }

  async create(req: GenerationRequest, policy: GenerationPolicy): Promise<CreatedJob> {
    const entry = this.#requests.available(req.model, policy.publicUrl);
    const body = this.#requests.checkedBody(entry, req.body);
    const { webhookUrl, zeroDataRetention, idempotencyKey } = req.options;
    const tags = checkTags(req.options.tags ?? [], policy.labels.tags);
    const assets = await checkJobInputs(
      this.#store,
      req.caller,
      { bodies: [{ schema: entry.request, body }], webhookUrl, zeroDataRetention: { asked: zeroDataRetention, offered: entry.zeroDataRetention === true, by: entry.path } },
      policy,
    );
    // The key's fingerprint covers the body as sent (with defaults), not the drawn seed: a retry
    // replays the first job, seed and all.
    const request = withRandomSeed(entry.request, body, this.#random);
    const job = {
      type: entry.path,
      request,
      price: this.#billing.priceOf(entry.path, request),
      webhookUrl,
      zeroDataRetention,
      assets,
      tags,
      idempotency: idempotencyKey ? { key: idempotencyKey, endpoint: entry.route ?? `/generate/${entry.path}`, body } : null,
      requestId: req.options.requestId ?? null,
    };
    return this.#admission.admit(req.caller, job, policy.publicUrl);
  }
}
