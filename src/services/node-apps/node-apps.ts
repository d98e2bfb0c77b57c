// Room services/node-apps/: node apps and their versions: publishing a graph of model steps, listing and reading them,
// and executing a version as one job (node-app-execution, which creates through jobs/).
// May import from services/: jobs and what jobs may import; test/unit/layers.test.ts holds the order.
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { formatMicros, msToMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import type { JsonObject, NodeAppListItem, NodeAppRecord, NodeAppVersionRecord } from '../../store/node-app-store.js';
import type { Store, Workspace } from '../../store/store.js';
import type { Catalog } from '../../models/catalog.js';
import { forbidden, invalid, notFound } from '../../domain/error-catalogue.js';
import { outputRef, refText } from '../../domain/node-app-graph.js';
import type { NodeAppGraph } from '../../domain/node-app-graph.js';
import { normalizeEmail } from '../identity/identity.js';
import type { AuthContext } from '../identity/identity.js';
import { checkDescription, checkExampleOutputs, checkNodeAppName, checkSchema, checkSlug } from './node-app-rules.js';
import { checkGraph } from './node-app-graph-check.js';
import type { RemoteModels } from './node-app-steps.js';
import { compileInputSchema } from './node-app-inputs.js';

/** The API user sees every app of its workspace; there is no other scope yet. */
export const NODE_APP_SCOPE = 'workspace';

/** GET /node-apps/{id}/versions's and GET /node-apps/{id}'s views: declared once, as schemas (node-app-view.ts). */
import type { NodeApp as NodeAppView, NodeAppVersion as NodeAppVersionView, NodeAppVersionPage } from './node-app-view.js';
import { pageOf } from '../common/paging.js';
export type { NodeAppView, NodeAppVersionView, NodeAppVersionPage };

export interface CreateNodeApp {
  /** Workspace id or name. */
  readonly workspace: string;
  readonly name: string;
  readonly slug?: string;
  readonly description?: string;
  readonly asEmail: string;
}

export interface PublishNodeApp {
  readonly nodeAppId: string;
  /** Parsed JSON; checked here. */
  readonly inputSchema: unknown;
  readonly outputSchema: unknown;
  readonly exampleOutputs: readonly string[];
  /** Parsed JSON, checked here (node-app-graph-check.ts); absent: the version cannot be executed. */
  readonly graph?: unknown;
  readonly asEmail: string;
}

/** A validated versions query. */
export interface NodeAppVersionListQuery {
  /** Only versions created strictly before this instant. */
  readonly before?: Micros;
  readonly limit: number;
}

export function toVersionView(app: NodeAppRecord, v: NodeAppVersionRecord): NodeAppVersionView {
  return {
    id: app.id,
    author_id: app.authorId,
    workspace_id: app.workspaceId,
    name: app.name,
    slug: app.slug,
    description: app.description,
    scope: app.scope,
    created_at: formatMicros(app.createdAt),
    updated_at: formatMicros(app.updatedAt),
    version: v.version,
    version_created_at: formatMicros(v.createdAt),
    // Members have no user name of their own; the email's local part stands in for one.
    username: app.authorId.slice(0, app.authorId.lastIndexOf('@')),
    example_outputs: [...v.exampleOutputs],
    // Both were checked to have this shape when the version was published (node-app-rules.ts).
    input_openapi_schema: v.inputSchema as NodeAppVersionView['input_openapi_schema'],
    output_openapi_schema: v.outputSchema as NodeAppVersionView['output_openapi_schema'],
    node_app_version_id: v.id,
  };
}

/**
 * GET /node-apps/{id}'s view. The key mappings say how the graph reads the execute body and fills
 * `result.urls` (docs/node-apps.md); a version without a graph has none.
 */
export function toNodeAppView(app: NodeAppRecord, v: NodeAppVersionRecord, lastVersionId: string): NodeAppView {
  const { node_app_version_id: _, ...item } = toVersionView(app, v);
  // Checked at publish (node-app-graph-check.ts).
  const graph = v.graph as NodeAppGraph | null;
  const inputs = Object.keys(item.input_openapi_schema.properties);
  return {
    ...item,
    last_version_id: lastVersionId,
    input_key_mapping: graph && Object.fromEntries(inputs.map((name) => [name, `inputs.${name}`])),
    output_key_mapping: graph && Object.fromEntries(Object.keys(graph.outputs).map((name) => [refText(outputRef(graph, name)), name])),
  };
}

/** Node apps of a workspace: created and published by members (admin), listed through the API. */
export class NodeAppService {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #catalog: Catalog;
  readonly #remote: RemoteModels;

  /** `remote`: the models bound to remote workers, which a graph's steps cannot use. */
  constructor(store: Store, clock: Clock, catalog: Catalog, remote: RemoteModels) {
    this.#store = store;
    this.#clock = clock;
    this.#catalog = catalog;
    this.#remote = remote;
  }

  #now(): Micros {
    return msToMicros(this.#clock.nowMs());
  }

  /** Any member may author; returns the normalized email that becomes the author id. */
  async #requireMember(ws: Workspace, asEmail: string, action: string): Promise<string> {
    const email = normalizeEmail(asEmail);
    if (!(await this.#store.identity.getMember(ws.id, email))) {
      throw forbidden(`only members of workspace '${ws.name}' can ${action}; ${email} is not a member`);
    }
    return email;
  }

  async create(input: CreateNodeApp): Promise<NodeAppRecord> {
    const ws = await this.#store.identity.findWorkspace(input.workspace);
    if (!ws) throw notFound(`workspace '${input.workspace}' not found`);
    const author = await this.#requireMember(ws, input.asEmail, 'create node apps');
    const name = checkNodeAppName(input.name);
    const slug = checkSlug(input.slug, name);
    const app = await this.#store.nodeApps.createNodeApp({
      id: newId(),
      workspaceId: ws.id,
      name,
      slug,
      description: checkDescription(input.description),
      scope: NODE_APP_SCOPE,
      authorId: author,
      now: this.#now(),
    });
    if (!app) throw invalid(`workspace '${ws.name}' already has a node app with slug '${slug}'; choose another slug`);
    return app;
  }

  /** The workspace's apps, oldest first, each with its newest version's number (the operator's list). */
  async list(workspace: string): Promise<NodeAppListItem[]> {
    const ws = await this.#store.identity.findWorkspace(workspace);
    if (!ws) throw notFound(`workspace '${workspace}' not found`);
    return this.#store.nodeApps.listNodeApps(ws.id);
  }

  /** The next version: number and time are taken from the app's row in the same transaction. */
  async publish(input: PublishNodeApp): Promise<{ app: NodeAppRecord; version: NodeAppVersionRecord }> {
    const found = isUuid(input.nodeAppId) ? await this.#store.nodeApps.findNodeApp(input.nodeAppId.toLowerCase()) : undefined;
    if (!found) throw notFound(`node app '${input.nodeAppId}' not found`);
    const ws = await this.#store.identity.findWorkspace(found.workspaceId);
    if (!ws) throw notFound(`node app '${input.nodeAppId}' not found`);
    const publisher = await this.#requireMember(ws, input.asEmail, 'publish its node apps');
    const inputSchema = checkSchema(input.inputSchema, 'input schema');
    // Refused now rather than at every execute: execute checks inputs with this same compiler.
    compileInputSchema(inputSchema);
    const outputSchema = checkSchema(input.outputSchema, 'output schema');
    const exampleOutputs = checkExampleOutputs(input.exampleOutputs);
    const graph =
      input.graph === undefined ? null : (checkGraph(input.graph, { input: inputSchema, output: outputSchema }, this.#catalog, this.#clock.nowMs(), this.#remote) as unknown as JsonObject);
    const published = await this.#store.nodeApps.publishVersion(
      { id: newId(), nodeAppId: found.id, inputSchema, outputSchema, exampleOutputs, publishedBy: publisher, graph },
      this.#now(),
    );
    if (!published) throw notFound(`node app '${input.nodeAppId}' not found`);
    return published;
  }

  /** GET /node-apps/{id}: a version by its own id, with its app. Not found as listVersions. */
  async get(auth: AuthContext, versionId: string): Promise<NodeAppView> {
    const notThere = () => notFound(`node app version '${versionId}' not found`);
    if (!isUuid(versionId)) throw notThere();
    const found = await this.#store.nodeApps.getVersion(auth.workspace.id, versionId.toLowerCase());
    if (!found) throw notThere();
    const last = (await this.#store.nodeApps.lastVersionId(found.app.id)) ?? found.version.id;
    // The app read after its newest version, so updated_at is never older than last_version_id.
    const app = (await this.#store.nodeApps.getNodeApp(auth.workspace.id, found.app.id)) ?? found.app;
    return toNodeAppView(app, found.version, last);
  }

  /** Newest version first. Unknown, malformed and other workspaces' ids are all "not found". */
  async listVersions(auth: AuthContext, nodeAppId: string, query: NodeAppVersionListQuery): Promise<NodeAppVersionPage> {
    if (!isUuid(nodeAppId)) throw notFound(`node app '${nodeAppId}' not found`);
    const id = nodeAppId.toLowerCase();
    // Versions before the app: the app's updated_at is then never older than a version listed.
    const rows = await this.#store.nodeApps.listVersions({ workspaceId: auth.workspace.id, nodeAppId: id, ...query, limit: query.limit + 1 });
    const app = await this.#store.nodeApps.getNodeApp(auth.workspace.id, id);
    if (!app) throw notFound(`node app '${nodeAppId}' not found`);
    const { page, next_cursor } = pageOf(rows, query.limit, (v) => v.createdAt);
    return { items: page.map((v) => toVersionView(app, v)), next_cursor };
  }
}
