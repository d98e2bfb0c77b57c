import type { Micros } from '../lib/time.js';

/** A JSON object as stored; the service decides what a valid one is. */
export type JsonObject = Readonly<Record<string, unknown>>;

/** A user-built node app of a workspace (spec 2.5, the app's half of a version item). */
export interface NodeAppRecord {
  readonly id: string;
  readonly workspaceId: string;
  readonly name: string;
  readonly slug: string;
  readonly description: string;
  readonly scope: string;
  /** The creating member's email (members have no id of their own). */
  readonly authorId: string;
  readonly createdAt: Micros;
  /** The last publish time, or the creation time before the first publish. */
  readonly updatedAt: Micros;
}

/** One published, runnable version of a node app. */
export interface NodeAppVersionRecord {
  readonly id: string;
  readonly nodeAppId: string;
  /** 1, 2, 3, ... per app. */
  readonly version: number;
  /** Strictly increasing per app, so a time cursor over versions is exact. */
  readonly createdAt: Micros;
  readonly inputSchema: JsonObject;
  readonly outputSchema: JsonObject;
  readonly exampleOutputs: readonly string[];
  /** The member who published it (kept for audit; not part of the API item). */
  readonly publishedBy: string;
  /** The graph it runs (domain/node-app-graph.ts, checked at publish), or null: it cannot be executed. */
  readonly graph: JsonObject | null;
}

/** An app as the operator's list shows it: with the number of its newest version (0: none published). */
export type NodeAppListItem = NodeAppRecord & { readonly lastVersion: number };

/** A new app: the record's fields, with both of its times `now`. */
export type NewNodeApp = Omit<NodeAppRecord, 'createdAt' | 'updatedAt'> & { readonly now: Micros };

export interface NewNodeAppVersion {
  readonly id: string;
  readonly nodeAppId: string;
  readonly inputSchema: JsonObject;
  readonly outputSchema: JsonObject;
  readonly exampleOutputs: readonly string[];
  readonly publishedBy: string;
  readonly graph: JsonObject | null;
}

export interface NodeAppVersionQuery {
  /** Only versions of an app of this workspace: another workspace's app lists nothing. */
  readonly workspaceId: string;
  readonly nodeAppId: string;
  /** Only versions created strictly before this instant. */
  readonly before?: Micros;
  readonly limit: number;
}

export interface NodeAppStore {
  /** Stores a new app; undefined (nothing written) if the workspace already has an app with its slug. */
  createNodeApp(input: NewNodeApp): Promise<NodeAppRecord | undefined>;
  /** The app if it belongs to the workspace. */
  getNodeApp(workspaceId: string, id: string): Promise<NodeAppRecord | undefined>;
  /** The workspace's apps, oldest first. */
  listNodeApps(workspaceId: string): Promise<NodeAppListItem[]>;
  /** The app whatever its workspace (the operator's view). */
  findNodeApp(id: string): Promise<NodeAppRecord | undefined>;
  /**
   * Stores the app's next version: number previous + 1 (from 1), created at `now` or one
   * microsecond after the app's newest version if that is later. The app's updated_at becomes
   * that time. Undefined (nothing written) if the app does not exist.
   */
  publishVersion(input: NewNodeAppVersion, now: Micros): Promise<{ app: NodeAppRecord; version: NodeAppVersionRecord } | undefined>;
  /** A version (by its own id) with its app, if the app belongs to the workspace. */
  getVersion(workspaceId: string, versionId: string): Promise<{ app: NodeAppRecord; version: NodeAppVersionRecord } | undefined>;
  /** The id of the app's newest version, if it has one. */
  lastVersionId(nodeAppId: string): Promise<string | undefined>;
  /** Newest first. */
  listVersions(query: NodeAppVersionQuery): Promise<NodeAppVersionRecord[]>;
}
