import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { checkWebhookUrl } from '../../domain/webhook-url.js';
import { refusePrivateUrls, urlInputsOf } from '../../models/private-urls.js';
import type { UrlInput } from '../../models/private-urls.js';
import type { Store } from '../../store/store.js';
import { assetInputsOf, checkAssetInputs } from '../assets/asset-inputs.js';
import type { AssetInput } from '../assets/asset-inputs.js';
import type { AuthContext } from '../identity/identity.js';
import { checkStyleInputs } from '../styles/style-inputs.js';

/** How the caller's transport names the options, so a refusal names what the client sent. */
export interface OptionLabels {
  readonly webhookUrl: string;
  readonly zeroDataRetention: string;
  readonly tags: string;
}

/** The server's settings a transport passes with each request. */
export interface GenerationPolicy {
  /** `--allow-private-urls`: when false, literal private and loopback URLs are refused at once. */
  readonly allowPrivateUrls: boolean;
  /** The server's public URL, which a sunset model's migration link is resolved against. */
  readonly publicUrl: string;
  readonly labels: OptionLabels;
}

/** One validated request body a job will run: a generation's, or a node-app step's. */
export interface JobBody {
  /** Its model's request schema, which says which fields are URLs. */
  readonly schema: object | undefined;
  readonly body: Readonly<Record<string, unknown>>;
  /** The node-app step it is, so refusals name it: `step 'img' field 'image_url'`, `step 'img': styles[0].id ...`. */
  readonly step?: string;
}

/** What a job's creation checks after its bodies passed validation, beside them. */
export interface JobInputsRequest {
  readonly bodies: readonly JobBody[];
  /** As the caller sent it, unchecked. */
  readonly webhookUrl: string | null;
  readonly zeroDataRetention: {
    readonly asked: boolean;
    readonly offered: boolean;
    /** What does not offer it, for the refusal: a model path, `node apps`. */
    readonly by: string;
  };
}

/**
 * The checks every job's creation makes once its bodies are valid, in the API's order: the webhook
 * URL, zero data retention, the bodies' URLs that are this server's assets (read from its store,
 * never fetched, so the private-URL rule is not theirs), style ids, then literal private URLs.
 * Returns the assets the job uses.
 */
export async function checkJobInputs(store: Store, caller: AuthContext, req: JobInputsRequest, policy: GenerationPolicy): Promise<AssetInput[]> {
  const { webhookUrl, zeroDataRetention } = req;
  if (webhookUrl !== null) checkWebhookUrl(webhookUrl, policy.labels.webhookUrl);
  if (zeroDataRetention.asked && !zeroDataRetention.offered) throw invalid(`${policy.labels.zeroDataRetention} is not supported by ${zeroDataRetention.by}`);
  // Found once. A node-app step's earlier steps' outputs are `.invalid` stand-ins: the job's own files, never judged.
  const urls = req.bodies.flatMap(({ schema, body, step }) =>
    urlInputsOf(schema, body).map((u): UrlInput => (step === undefined ? u : { field: `step '${step}' field '${u.field}'`, url: u.url })),
  );
  const assets = assetInputsOf(urls);
  const assetUrls = assets.length > 0 ? await checkAssetInputs(store.assets, caller.workspace.id, assets, policy.publicUrl) : undefined;
  // Styles cannot be deleted, so a style seen here is still there when the job runs.
  for (const { body, step } of req.bodies) await inStep(step, () => checkStyleInputs(store.styles, caller, body));
  if (!policy.allowPrivateUrls) {
    refusePrivateUrls(urls, webhookUrl === null ? null : { label: policy.labels.webhookUrl, url: webhookUrl }, assetUrls);
  }
  return assets.filter((a) => assetUrls?.has(a.url));
}

/** A refusal about a node-app step's body, its message prefixed with the step. */
async function inStep(step: string | undefined, check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (step !== undefined && err instanceof DomainError && err.code === 'invalid_request') {
      throw new DomainError(err.code, `step '${step}': ${err.message}`, err.details);
    }
    throw err;
  }
}
