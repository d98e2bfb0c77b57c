import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import type { Database, NodeAppVersionsTable, NodeAppsTable } from '../schema.js';
import type {
  JsonObject,
  NewNodeApp,
  NewNodeAppVersion,
  NodeAppListItem,
  NodeAppRecord,
  NodeAppStore,
  NodeAppVersionQuery,
  NodeAppVersionRecord,
} from '../node-app-store.js';
import type { Transact } from './transact.js';

const toNodeApp = (r: Selectable<NodeAppsTable>): NodeAppRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  slug: r.slug,
  description: r.description,
  scope: r.scope,
  authorId: r.author_id,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const toVersion = (r: Selectable<NodeAppVersionsTable>): NodeAppVersionRecord => ({
  id: r.id,
  nodeAppId: r.node_app_id,
  version: Number(r.version),
  createdAt: Number(r.created_at),
  inputSchema: JSON.parse(r.input_schema) as JsonObject,
  outputSchema: JSON.parse(r.output_schema) as JsonObject,
  exampleOutputs: JSON.parse(r.example_outputs) as string[],
  publishedBy: r.published_by,
  graph: r.graph === null ? null : (JSON.parse(r.graph) as JsonObject),
});

export class SqlNodeAppStore implements NodeAppStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;

  constructor(db: Kysely<Database>, transact: Transact) {
    this.#db = db;
    this.#transact = transact;
  }

  async createNodeApp(input: NewNodeApp): Promise<NodeAppRecord | undefined> {
    const row: Selectable<NodeAppsTable> = {
      id: input.id,
      workspace_id: input.workspaceId,
      name: input.name,
      slug: input.slug,
      description: input.description,
      scope: input.scope,
      author_id: input.authorId,
      created_at: input.now,
      updated_at: input.now,
      last_version: 0,
      last_version_us: 0,
    };
    // The unique (workspace_id, slug) decides a race between two creators on any backend.
    const inserted = await this.#db
      .insertInto('node_apps')
      .values(row)
      .onConflict((oc) => oc.columns(['workspace_id', 'slug']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted && toNodeApp(row);
  }

  async getNodeApp(workspaceId: string, id: string): Promise<NodeAppRecord | undefined> {
    const r = await this.#db
      .selectFrom('node_apps')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && toNodeApp(r);
  }

  async listNodeApps(workspaceId: string): Promise<NodeAppListItem[]> {
    const rows = await this.#db
      .selectFrom('node_apps')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at', 'asc')
      .orderBy('slug', 'asc')
      .execute();
    return rows.map((r) => ({ ...toNodeApp(r), lastVersion: Number(r.last_version) }));
  }

  async findNodeApp(id: string): Promise<NodeAppRecord | undefined> {
    const r = await this.#db.selectFrom('node_apps').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toNodeApp(r);
  }

  publishVersion(input: NewNodeAppVersion, now: number): Promise<{ app: NodeAppRecord; version: NodeAppVersionRecord } | undefined> {
    return this.#transact(async (db) => {
      // One atomic statement takes the app's row lock (PostgreSQL) or the write lock (SQLite), so
      // concurrent publishers get distinct numbers and distinct, increasing times. SET expressions
      // all read the row as it was before the update.
      const next = sql<number>`CASE WHEN last_version_us + 1 > CAST(${now} AS BIGINT) THEN last_version_us + 1 ELSE CAST(${now} AS BIGINT) END`;
      const app = await db
        .updateTable('node_apps')
        .set({ last_version: sql<number>`last_version + 1`, last_version_us: next, updated_at: next })
        .where('id', '=', input.nodeAppId)
        .returningAll()
        .executeTakeFirst();
      if (!app) return undefined;
      const row: Selectable<NodeAppVersionsTable> = {
        id: input.id,
        node_app_id: input.nodeAppId,
        version: Number(app.last_version),
        created_at: Number(app.last_version_us),
        input_schema: JSON.stringify(input.inputSchema),
        output_schema: JSON.stringify(input.outputSchema),
        example_outputs: JSON.stringify(input.exampleOutputs),
        published_by: input.publishedBy,
        graph: input.graph === null ? null : JSON.stringify(input.graph),
      };
      await db.insertInto('node_app_versions').values(row).execute();
      return { app: toNodeApp(app), version: toVersion(row) };
    });
  }

  async getVersion(workspaceId: string, versionId: string): Promise<{ app: NodeAppRecord; version: NodeAppVersionRecord } | undefined> {
    const v = await this.#db.selectFrom('node_app_versions').selectAll().where('id', '=', versionId).executeTakeFirst();
    const app = v && (await this.getNodeApp(workspaceId, v.node_app_id));
    return app && { app, version: toVersion(v) };
  }

  async lastVersionId(nodeAppId: string): Promise<string | undefined> {
    const v = await this.#db.selectFrom('node_app_versions').select('id').where('node_app_id', '=', nodeAppId).orderBy('created_at', 'desc').limit(1).executeTakeFirst();
    return v?.id;
  }

  async listVersions(q: NodeAppVersionQuery): Promise<NodeAppVersionRecord[]> {
    let query = this.#db
      .selectFrom('node_app_versions as v')
      .innerJoin('node_apps as a', 'a.id', 'v.node_app_id')
      .selectAll('v')
      .where('a.workspace_id', '=', q.workspaceId)
      .where('v.node_app_id', '=', q.nodeAppId);
    if (q.before !== undefined) query = query.where('v.created_at', '<', q.before);
    const rows = await query.orderBy('v.created_at', 'desc').limit(q.limit).execute();
    return rows.map(toVersion);
  }
}
