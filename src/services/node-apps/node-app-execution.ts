import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { invalid, notFound } from '../../domain/error-catalogue.js';
import type { MicroUsd } from '../../domain/money.js';
import { GraphError, parseGraph } from '../../domain/node-app-graph.js';
import type { NodeAppGraph } from '../../domain/node-app-graph.js';
import { nodeAppJobType, stepOutputStandIns } from '../../domain/node-app-plan.js';
import type { NodeAppPlan } from '../../domain/node-app-plan.js';
import type { Catalog } from '../../models/catalog.js';
import type { Store } from '../../store/store.js';
import type { BillingService } from '../billing/billing.js';
import type { GenerationPolicy } from '../jobs/generation.js';
import type { AuthContext } from '../identity/identity.js';
import type { JobAdmission } from '../jobs/job-admission.js';
import type { CreatedJob } from '../jobs/job-admission.js';
import { checkJobInputs } from '../jobs/job-inputs.js';
import { checkTags } from '../../domain/job-tags.js';
import { NodeAppInputs } from './node-app-inputs.js';
import { checkedStep } from './node-app-steps.js';
import type { RemoteModels } from './node-app-steps.js';

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
    /** The transport's id of the request (X-Request-Id). */
    readonly requestId?: string | null;
    /** The job's tags as sent, unchecked (domain/job-tags.ts); absent: none. */
    readonly tags?: readonly string[];
  };
}

/**
 * The use case "execute a node app" (POST /node-apps/{id}/execute): one job that runs the
 * version's graph. Refusals come in this order: the version (404; 400 without a graph), the
 * inputs against its input schema, each step's model (410 after its sunset) and body (built as
 * the run builds it: node-app-steps.ts), the tags, then what every job's creation checks (job-inputs.ts:
 * webhook URL, zero data retention, assets, styles, private URLs), then, as for any job, the key,
 * the balance (the steps' summed price, held at once) and the workspace's limits.
 */
export class NodeAppExecution {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #catalog: Catalog;
  readonly #billing: BillingService;
  readonly #admission: JobAdmission;
  readonly #inputs = new NodeAppInputs();
  readonly #remote: RemoteModels;

  /** `remote`: the models bound to remote workers, which a graph's steps cannot use. */
  constructor(store: Store, clock: Clock, catalog: Catalog, billing: BillingService, remote: RemoteModels, admission: JobAdmission) {
    this.#store = store;
    this.#clock = clock;
    this.#catalog = catalog;
    this.#remote = remote;
    this.#billing = billing;
    this.#admission = admission;
  }

  async execute(req: ExecuteRequest, policy: GenerationPolicy): Promise<CreatedJob> {
    const found = isUuid(req.versionId) ? await this.#store.nodeApps.getVersion(req.caller.workspace.id, req.versionId.toLowerCase()) : undefined;
    if (!found) throw notFound(`node app version '${req.versionId}' not found`);
    const { app, version } = found;
    if (version.graph === null) {
      throw invalid(`version ${version.version} of node app '${app.name}' has no graph and cannot be executed; execute a version published with a graph`);
    }
    const graph = this.#graphOf(version.graph);
    const inputs = this.#inputs.check(version.id, version.inputSchema, req.body);
    const { webhookUrl, zeroDataRetention, idempotencyKey } = req.options;
    const phase = { at: 'execute', nowMs: this.#clock.nowMs(), publicUrl: policy.publicUrl } as const;
    const scope = { inputs, steps: stepOutputStandIns(graph, 'check') };
    const steps = graph.steps.map((step) => ({ id: step.id, ...checkedStep(this.#catalog, step, scope, phase, this.#remote) }));
    const tags = checkTags(req.options.tags ?? [], policy.labels.tags);
    const assets = await checkJobInputs(
      this.#store,
      req.caller,
      {
        bodies: steps.map((s) => ({ schema: s.entry.request, body: s.body, step: s.id })),
        webhookUrl,
        // Asked for; no node app offers it.
        zeroDataRetention: { asked: zeroDataRetention, offered: false, by: 'node apps' },
      },
      policy,
    );
    const plan: NodeAppPlan = { node_app_id: app.id, node_app_version_id: version.id, inputs, graph: version.graph };
    const job = {
      type: nodeAppJobType(app.slug),
      request: plan as unknown as Readonly<Record<string, unknown>>,
      price: steps.reduce((sum: MicroUsd, s) => sum + this.#billing.priceOf(s.entry.path, s.body), 0),
      webhookUrl,
      zeroDataRetention: false,
      assets,
      tags,
      idempotency: idempotencyKey ? { key: idempotencyKey, endpoint: `/node-apps/${version.id}/execute`, body: inputs } : null,
      requestId: req.options.requestId ?? null,
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

}
