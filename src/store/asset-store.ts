import type { Micros } from '../lib/time.js';

/** A JSON object as stored; the service decides what goes in it. */
export type AssetMetadata = Readonly<Record<string, unknown>>;

/**
 * A file a workspace uploaded (POST /assets). Its bytes live in the output store under
 * `outputKey`, as `fileName`; the row says what they are. A deleted asset keeps its row as a
 * tombstone (`deletedAt` set) while jobs that existed at the deletion may still read its file.
 */
export interface AssetRecord {
  readonly id: string;
  readonly workspaceId: string;
  /** The output-store key of its file: the secret part of its URL. Unique. */
  readonly outputKey: string;
  /** The file's name under the key, e.g. `asset.png`. */
  readonly fileName: string;
  readonly sizeBytes: number;
  readonly mimeType: string;
  readonly width: number | null;
  readonly height: number | null;
  readonly description: string | null;
  readonly metadata: AssetMetadata;
  /** Strictly increasing per workspace, so a time cursor over assets is exact. */
  readonly createdAt: Micros;
  readonly deletedAt: Micros | null;
}

export type NewAsset = Omit<AssetRecord, 'createdAt' | 'deletedAt'>;

export interface AssetQuery {
  readonly workspaceId: string;
  /** Only assets created strictly before this instant. */
  readonly before?: Micros;
  readonly limit: number;
}

export interface DeletedAsset {
  readonly asset: AssetRecord;
  /**
   * Whether a job that may read the file is still unfinished: a job of the workspace that exists
   * at the deletion and is not in a terminal status. While one is, the file must stay (the
   * janitor removes it later); otherwise the caller removes it at once.
   */
  readonly filesStillNeeded: boolean;
}

export interface AssetStore {
  /**
   * Stores a live asset. Its created_at is `now`, or one microsecond after the workspace's newest
   * asset if that is later (as jobs do per API user). Where writers take row locks (PostgreSQL)
   * it locks the workspace row first, so concurrent inserts queue (a no-op if the caller holds it).
   */
  insertAsset(asset: NewAsset, now: Micros): Promise<AssetRecord>;
  /** A live asset of the workspace; undefined for another workspace's, a deleted one or none. */
  getAsset(workspaceId: string, id: string): Promise<AssetRecord | undefined>;
  /** The asset (live or a tombstone) whose file has this output key, whoever owns it. */
  findAssetByKey(outputKey: string): Promise<AssetRecord | undefined>;
  /** The workspace's live assets, newest first. */
  listAssets(query: AssetQuery): Promise<AssetRecord[]>;
  /**
   * What the storage quota counts: bytes of the workspace's live assets, and of its tombstones
   * whose files are still kept for a job (they are still on the disk).
   */
  usedBytes(workspaceId: string): Promise<number>;
  /**
   * Marks a live asset of the workspace deleted (undefined if there is none): at `now`, or at the
   * newest unfinished job's creation time if that is later, so every job that exists keeps the
   * file. When no job still needs it, the row is removed outright instead. Call it
   * under the workspace lock, and check a new job's asset URLs under it too: a job being admitted
   * with this asset's URL is then either committed (and counted here) or sees the asset gone.
   */
  deleteAsset(workspaceId: string, id: string, now: Micros): Promise<DeletedAsset | undefined>;
}
