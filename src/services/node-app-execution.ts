import type { Clock } from '../lib/clock.js';
import { isUuid } from '../lib/ids.js';
import { DomainError, invalid, notFound } from '../domain/errors.js';
import type { MicroUsd } from '../domain/money.js';
import { GraphError, parseGraph, substitute } from '../domain/node-app-graph.js';
import type { GraphScope, NodeAppGraph } from '../domain/node-app-graph.js';
import { nodeAppJobType, stepOutputStandIns } from '../domain/node-app-plan.js';
import type { NodeAppPlan } from '../domain/node-app-plan.js';
import { checkWebhookUrl } from '../domain/webhook-url.js';
import { isAvailable } from '../models/catalog.js';
import type { Catalog, CatalogEntry } from '../models/catalog.js';
import { sunsetError } from '../models/deprecation.js';
import { refusePrivateUrls, urlInputsOf } from '../models/private-urls.js';
import type { UrlInput } from '../models/private-urls.js';
import type { BodyValidator } from '../models/validation.js';
import type { Store } from '../store/store.js';
import { assetInputsOf, checkAssetInputs } from './asset-inputs.js';
import type { BillingService } from './billing.js';
import type { GenerationPolicy } from './generation.js';
import type { AuthContext } from './identity.js';
import { JobAdmission } from './job-admission.js';
import type { CreatedJob } from './job-admission.js';
import { NodeAppInputs } from './node-app-inputs.js';
import { checkStyleInputs } from './style-inputs.js';

export interface ExecuteRequest {
  /** A node-app version id (GET /node-apps/{id}/versions's `node_app_version_id`). */
  readonly versionId: string;
  /** The body as received (parsed JSON, unchecked): the app's inputs. */
  readonly body: unknown;
  readonly caller: AuthContext;
  readonly options: {
    /** As the caller sent it, unchecked. */
    readonly webhookUrl: string | null;
    /** Asked for; no node app offers it. */
    readonly zeroDataRetention: boolean;
    readonly idempotencyKey: string | null;
  };
}

/** A step of the graph as admission checks it: its model and its body, stand-in URLs for earlier steps' outputs. */
interface CheckedStep {
  readonly id: string;
  readonly entry: CatalogEntry;
  readonly body: Record<string, unknown>;
}

/** Prefixes a refusal's message with the step it is about, keeping its code and details. */
function inStep(id: string, err: unknown): unknown {
  // A graph's message already names the step's field: `steps.img.input.prompt: input 'x' was not given`.
  if (err instanceof GraphError) return invalid(err.message);
  if (err instanceof DomainError && err.code === 'invalid_request') return new DomainError(err.code, `step '${id}': ${err.message}`, err.details);
  return err;
}

/**
 * A step's body with the inputs in and stand-ins for earlier steps' outputs, validated (and its
 * defaults filled in) as a generation request would be: a body refused now would only fail the
 * job later. Aliases are not renamed: a graph uses the current field names.
 */
function stepBody(stepId: string, entry: CatalogEntry, input: Readonly<Record<string, unknown>>, scope: GraphScope): Record<string, unknown> {
  try {
    const body = substitute(input, scope, `steps.${stepId}.input`);
    // Present on every entry that takes requests (catalog.ts), and `#available` let only those through.
    const validate: BodyValidator = entry.validate!;
    validate(body);
    return body;
  } catch (err) {
    throw inStep(stepId, err);
  }
}

/**
 * The use case "execute a node app" (POST /node-apps/{id}/execute): one job that runs the
 * version's graph. Refusals come in this order: the version (404; 400 without a graph), the
 * inputs against its input schema, the webhook URL and zero data retention, each step's model
 * (410 after its sunset) and body, private URLs and assets, then, as for any job, the key, the
 * balance (the steps' summed price, held at once) and the workspace's limits.
 */
export class NodeAppExecution {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #catalog: Catalog;
  readonly #billing: BillingService;
  readonly #admission: JobAdmission;
  readonly #inputs = new NodeAppInputs();

  constructor(store: Store, clock: Clock, catalog: Catalog, billing: BillingService) {
    this.#store = store;
    this.#clock = clock;
    this.#catalog = catalog;
    this.#billing = billing;
    this.#admission = new JobAdmission(store, clock, billing);
  }

  async execute(req: ExecuteRequest, policy: GenerationPolicy): Promise<CreatedJob> {
    const workspaceId = req.caller.workspace.id;
    const found = isUuid(req.versionId) ? await this.#store.nodeApps.getVersion(workspaceId, req.versionId.toLowerCase()) : undefined;
    if (!found) throw notFound(`node app version '${req.versionId}' not found`);
    const { app, version } = found;
    if (version.graph === null) {
      throw invalid(`version ${version.version} of node app '${app.name}' has no graph and cannot be executed; execute a version published with a graph`);
    }
    const graph = this.#graphOf(version.graph);
    const inputs = this.#inputs.check(version.id, version.inputSchema, req.body);
    const { webhookUrl, zeroDataRetention, idempotencyKey } = req.options;
    if (webhookUrl !== null) checkWebhookUrl(webhookUrl, policy.labels.webhookUrl);
    if (zeroDataRetention) throw invalid(`${policy.labels.zeroDataRetention} is not supported by node apps`);

    const scope = { inputs, steps: stepOutputStandIns(graph, 'check') };
    const steps = graph.steps.map((step): CheckedStep => {
      const entry = this.#available(step.id, step.model, policy.publicUrl);
      return { id: step.id, entry, body: stepBody(step.id, entry, step.input, scope) };
    });
    for (const s of steps) await stepStyles(this.#store, req.caller, s);
    // Earlier steps' outputs stand in as `.invalid` URLs: they are this job's own files, not inputs to judge.
    const urls = steps.flatMap((s) =>
      urlInputsOf(s.entry.request, s.body).map((u): UrlInput => ({ field: `step '${s.id}' field '${u.field}'`, url: u.url })),
    );
    const assets = assetInputsOf(urls);
    const assetUrls = assets.length > 0 ? await checkAssetInputs(this.#store.assets, workspaceId, assets, policy.publicUrl) : undefined;
    if (!policy.allowPrivateUrls) {
      refusePrivateUrls(urls, webhookUrl === null ? null : { label: policy.labels.webhookUrl, url: webhookUrl }, assetUrls);
    }
    const plan: NodeAppPlan = { node_app_id: app.id, node_app_version_id: version.id, inputs, graph: version.graph };
    const job = {
      type: nodeAppJobType(app.slug),
      request: plan as unknown as Readonly<Record<string, unknown>>,
      price: steps.reduce((sum: MicroUsd, s) => sum + this.#billing.priceOf(s.entry.path, s.body), 0),
      webhookUrl,
      zeroDataRetention: false,
      assets: assets.filter((a) => assetUrls?.has(a.url)),
      idempotency: idempotencyKey ? { key: idempotencyKey, endpoint: `/node-apps/${version.id}/execute`, body: inputs } : null,
    };
    return this.#admission.admit(req.caller, job, policy.publicUrl);
  }

  /** The stored graph; it was checked when published, so a fault here is an old or damaged version. */
  #graphOf(stored: Readonly<Record<string, unknown>>): NodeAppGraph {
    try {
      return parseGraph(stored);
    } catch (err) {
      if (err instanceof GraphError) throw invalid(`this node app version's graph cannot be run: ${err.message}`);
      throw err;
    }
  }

  /** The step's model, if it takes requests now (410 after its sunset, as for generation). */
  #available(stepId: string, model: string, publicUrl: string): CatalogEntry {
    const entry = this.#catalog.get(model);
    if (!entry?.validate || entry.route) throw invalid(`step '${stepId}': model '${model}' is not offered by this server as a step`);
    if (entry.deprecation && !isAvailable(entry, this.#clock.nowMs())) throw sunsetError(entry.path, entry.deprecation, publicUrl);
    return entry;
  }
}

/** A step's `styles[].id` must name styles the caller may use, as a generation request's must. */
async function stepStyles(store: Store, caller: AuthContext, step: CheckedStep): Promise<void> {
  try {
    await checkStyleInputs(store.styles, caller, step.body);
  } catch (err) {
    if (err instanceof DomainError) throw invalid(`step '${step.id}': ${err.message}`);
    throw err;
  }
}
