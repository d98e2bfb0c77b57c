import { sql } from 'kysely';
import type { Expression, ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { JOB_STATUSES, isTerminal } from '../../domain/states.js';
import type { JobStatus } from '../../domain/states.js';
import type { AssetMetadata, AssetQuery, AssetRecord, AssetStore, DeletedAsset, NewAsset } from '../asset-store.js';
import type { AssetsTable, Database } from '../schema.js';
import { nextCreatedAt } from './increasing-time.js';
import type { Transact } from './transact.js';

/**
 * Statuses of a job that has not ended and so may still read an asset's file. Listed (IN), not
 * negated (NOT IN), so that each is one seek on jobs_workspace_status (workspace_id, status,
 * created_at) rather than a walk over the workspace's whole job history.
 */
const UNFINISHED: readonly JobStatus[] = Object.freeze(JOB_STATUSES.filter((s) => !isTerminal(s)));

/**
 * The tombstone rule, as a subquery for EXISTS: the jobs of the workspace created at or before
 * `before` that have not ended. Such a job may have been given the asset's URL while it was live,
 * so its file must stay. The same microsecond counts (a job stored just before the deletion may
 * share its instant); a job stored after it in that microsecond is kept too, the safe side. The
 * arguments may be column references of an enclosing query.
 */
export function unfinishedJobsBefore(db: Kysely<Database>, workspaceId: Expression<string> | string, before: Expression<number | null> | number) {
  return unfinishedJobs(db, workspaceId).where('j.created_at', '<=', before);
}

/**
 * The tombstone rule in its other form, for a sweep over many tombstones: the creation time of
 * the workspace's oldest unfinished job (undefined: none). A tombstone deleted at T is kept while
 * this is <= T, exactly when `unfinishedJobsBefore(ws, T)` finds a job. One seek per status on
 * jobs_workspace_status, where an anti-join per tombstone made PostgreSQL hash every unfinished job.
 */
export async function oldestUnfinishedJob(db: Kysely<Database>, workspaceId: string): Promise<number | undefined> {
  let oldest: number | undefined;
  for (const status of UNFINISHED) {
    const r = await db
      .selectFrom('jobs')
      .select('created_at')
      .where('workspace_id', '=', workspaceId)
      .where('status', '=', status)
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirst();
    if (r && (oldest === undefined || Number(r.created_at) < oldest)) oldest = Number(r.created_at);
  }
  return oldest;
}

/** Every job of the workspace that has not ended: under the workspace lock, every job that may hold an asset URL. */
function unfinishedJobs(db: Kysely<Database>, workspaceId: Expression<string> | string) {
  return db.selectFrom('jobs as j').select(sql<number>`1`.as('one')).where('j.workspace_id', '=', workspaceId).where('j.status', 'in', [...UNFINISHED]);
}

/**
 * The keys among `keys` whose asset files must be kept: a live asset's, and a tombstone's while
 * the tombstone rule holds at its deletion time. One index seek per key (the unique output_key).
 */
export function assetKeysKept(db: Kysely<Database>, keys: readonly string[]) {
  return db.selectFrom('assets as a').select('a.output_key').where('a.output_key', 'in', [...keys]).where(fileKept(db));
}

/** The rows of `assets as a` whose file is still kept: live, or a tombstone the rule holds for. */
function fileKept(db: Kysely<Database>) {
  return (eb: ExpressionBuilder<Database & { a: AssetsTable }, 'a'>) =>
    eb.or([eb('a.deleted_at', 'is', null), eb.exists(unfinishedJobsBefore(db, eb.ref('a.workspace_id'), eb.ref('a.deleted_at')))]);
}

const toAsset = (r: Selectable<AssetsTable>): AssetRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  outputKey: r.output_key,
  fileName: r.file_name,
  sizeBytes: Number(r.size_bytes),
  mimeType: r.mime_type,
  width: r.width === null ? null : Number(r.width),
  height: r.height === null ? null : Number(r.height),
  description: r.description,
  metadata: JSON.parse(r.metadata) as AssetMetadata,
  createdAt: Number(r.created_at),
  deletedAt: r.deleted_at === null ? null : Number(r.deleted_at),
});

export class SqlAssetStore implements AssetStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;
  readonly #rowLocks: boolean;

  /** `rowLocks`: writers take row locks (PostgreSQL), so an insert locks its workspace row first. */
  constructor(db: Kysely<Database>, transact: Transact, rowLocks: boolean) {
    this.#db = db;
    this.#transact = transact;
    this.#rowLocks = rowLocks;
  }

  insertAsset(asset: NewAsset, now: number): Promise<AssetRecord> {
    return this.#transact(async (db) => {
      const next = await nextCreatedAt(db, 'assets', asset.workspaceId, now, this.#rowLocks);
      const { created_at } = await db
        .insertInto('assets')
        .values({
          id: asset.id,
          workspace_id: asset.workspaceId,
          output_key: asset.outputKey,
          file_name: asset.fileName,
          size_bytes: asset.sizeBytes,
          mime_type: asset.mimeType,
          width: asset.width,
          height: asset.height,
          description: asset.description,
          metadata: JSON.stringify(asset.metadata),
          created_at: next,
          deleted_at: null,
        })
        .returning('created_at')
        .executeTakeFirstOrThrow();
      return { ...asset, createdAt: Number(created_at), deletedAt: null };
    });
  }

  async getAsset(workspaceId: string, id: string): Promise<AssetRecord | undefined> {
    const r = await this.#db
      .selectFrom('assets')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return r && toAsset(r);
  }

  async findAssetByKey(outputKey: string): Promise<AssetRecord | undefined> {
    const r = await this.#db.selectFrom('assets').selectAll().where('output_key', '=', outputKey).executeTakeFirst();
    return r && toAsset(r);
  }

  async listAssets(q: AssetQuery): Promise<AssetRecord[]> {
    let query = this.#db.selectFrom('assets').selectAll().where('workspace_id', '=', q.workspaceId).where('deleted_at', 'is', null);
    if (q.before !== undefined) query = query.where('created_at', '<', q.before);
    const rows = await query.orderBy('created_at', 'desc').limit(q.limit).execute();
    return rows.map(toAsset);
  }

  async usedBytes(workspaceId: string): Promise<number> {
    // The cast makes PostgreSQL's SUM (a numeric, read as a string) a bigint, read as a number.
    // A tombstone whose file is still kept counts too: its bytes are still on the disk, and
    // upload-then-delete must not let a workspace past its quota while a job keeps files.
    const r = await this.#db
      .selectFrom('assets as a')
      .select(sql<number>`CAST(COALESCE(SUM(a.size_bytes), 0) AS BIGINT)`.as('total'))
      .where('a.workspace_id', '=', workspaceId)
      .where(fileKept(this.#db))
      .executeTakeFirstOrThrow();
    return Number(r.total);
  }

  deleteAsset(workspaceId: string, id: string, now: number): Promise<DeletedAsset | undefined> {
    return this.#transact(async (db) => {
      // The common case, no job that may read the file: the row goes, in one guarded statement.
      const gone = await db
        .deleteFrom('assets')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .where((eb) => eb.not(eb.exists(unfinishedJobs(db, workspaceId))))
        .returningAll()
        .executeTakeFirst();
      if (gone) return { asset: { ...toAsset(gone), deletedAt: now }, filesStillNeeded: false };
      // Otherwise a tombstone. Not guarded by the rule again: should the last such job have
      // ended in between (PostgreSQL), a tombstone is the safe side, and the janitor frees it.
      // Its time is never before an unfinished job's creation: job times run ahead of the clock
      // in a burst (strictly increasing per user), and every job that exists now must keep it.
      const newest = await unfinishedJobs(db, workspaceId)
        .clearSelect()
        .select((eb) => eb.fn.max('j.created_at').as('at'))
        .executeTakeFirst();
      const deletedAt = Math.max(now, Number(newest?.at ?? 0));
      const kept = await db
        .updateTable('assets')
        .set({ deleted_at: deletedAt })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
      return kept && { asset: toAsset(kept), filesStillNeeded: true };
    });
  }
}
