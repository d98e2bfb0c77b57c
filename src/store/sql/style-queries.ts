import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Database, StylesTable } from '../schema.js';
import type { NewStyle, StoredArtifact, StyleQuery, StylePatch, StyleRecord, StyleStore } from '../style-store.js';
import { nextCreatedAt } from './increasing-time.js';
import type { Transact } from './transact.js';

/** Every column but the artifact (up to 64 KiB a row), which only the engines' loads read. */
const RECORD_COLUMNS = [
  'id',
  'workspace_id',
  'api_user_id',
  'trained_by',
  'job_id',
  'title',
  'model',
  'type',
  'trigger_word',
  'public',
  'shared_with_workspace',
  'urls',
  'cover_url',
  'output_key',
  'like_count',
  'share_link_at',
  'created_at',
  'updated_at',
] as const;

type RecordRow = Pick<Selectable<StylesTable>, (typeof RECORD_COLUMNS)[number]>;

const toStyle = (r: RecordRow): StyleRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  apiUserId: r.api_user_id,
  trainedBy: r.trained_by,
  jobId: r.job_id,
  title: r.title,
  model: r.model,
  type: r.type,
  triggerWord: r.trigger_word,
  public: Number(r.public) === 1,
  sharedWithWorkspace: Number(r.shared_with_workspace) === 1,
  urls: JSON.parse(r.urls) as string[],
  coverUrl: r.cover_url,
  outputKey: r.output_key,
  likeCount: Number(r.like_count),
  shareLinkAt: r.share_link_at === null ? null : Number(r.share_link_at),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** The keys among `keys` a style holds (its cover's), as a query the job store unions with its own. */
export function styleKeysKept(db: Kysely<Database>, keys: readonly string[]) {
  return db.selectFrom('styles').select('output_key').where('output_key', 'in', [...keys]);
}

export class SqlStyleStore implements StyleStore {
  readonly #db: Kysely<Database>;
  readonly #transact: Transact;
  readonly #rowLocks: boolean;

  /** `rowLocks`: writers take row locks (PostgreSQL), so an insert locks its workspace row first. */
  constructor(db: Kysely<Database>, transact: Transact, rowLocks: boolean) {
    this.#db = db;
    this.#transact = transact;
    this.#rowLocks = rowLocks;
  }

  insertStyle(style: NewStyle, now: number): Promise<StyleRecord> {
    return this.#transact(async (db) => {
      const next = await nextCreatedAt(db, 'styles', style.workspaceId, now, this.#rowLocks);
      const row = await db
        .insertInto('styles')
        .values({
          id: style.id,
          workspace_id: style.workspaceId,
          api_user_id: style.apiUserId,
          trained_by: style.trainedBy,
          job_id: style.jobId,
          title: style.title,
          model: style.model,
          type: style.type,
          trigger_word: style.triggerWord,
          public: 0,
          shared_with_workspace: 0,
          urls: JSON.stringify(style.urls),
          cover_url: style.coverUrl,
          output_key: style.outputKey,
          artifact: JSON.stringify(style.artifact),
          like_count: 0,
          share_link_at: null,
          created_at: next,
          updated_at: next,
        })
        .returning(RECORD_COLUMNS)
        .executeTakeFirstOrThrow();
      return toStyle(row);
    });
  }

  async getStyle(id: string): Promise<StyleRecord | undefined> {
    const r = await this.#db.selectFrom('styles').select(RECORD_COLUMNS).where('id', '=', id).executeTakeFirst();
    return r && toStyle(r);
  }

  async listStyles(q: StyleQuery): Promise<StyleRecord[]> {
    if (q.ids?.length === 0) return [];
    let query = this.#db.selectFrom('styles').select(RECORD_COLUMNS).where('workspace_id', '=', q.workspaceId);
    // The workspace's styles canSee (services/styles/style-inputs.ts) admits: the member's own, and other
    // members' once shared with the workspace or public. `user` and `shared` split `all` in two.
    if (q.filter === 'user') {
      query = query.where('trained_by', '=', q.memberEmail);
    } else if (q.filter === 'shared') {
      query = query
        .where((eb) => eb.or([eb('shared_with_workspace', '=', 1), eb('public', '=', 1)]))
        .where((eb) => eb.or([eb('trained_by', 'is', null), eb('trained_by', '<>', q.memberEmail)]));
    } else {
      query = query.where((eb) => eb.or([eb('trained_by', '=', q.memberEmail), eb('shared_with_workspace', '=', 1), eb('public', '=', 1)]));
    }
    if (q.ids) query = query.where('id', 'in', [...q.ids]);
    if (q.model !== undefined) query = query.where('model', '=', q.model);
    if (q.before !== undefined) query = query.where('created_at', '<', q.before);
    const rows = await query.orderBy('created_at', 'desc').limit(q.limit).execute();
    return rows.map(toStyle);
  }

  async updateStyle(id: string, patch: StylePatch, now: number): Promise<StyleRecord | undefined> {
    const set: Updateable<StylesTable> = { updated_at: now };
    if (patch.title !== undefined) set.title = patch.title;
    if (patch.public !== undefined) set.public = patch.public ? 1 : 0;
    if (patch.urls !== undefined) set.urls = JSON.stringify(patch.urls);
    if (patch.coverUrl !== undefined) set.cover_url = patch.coverUrl;
    if (patch.sharedWithWorkspace !== undefined) set.shared_with_workspace = patch.sharedWithWorkspace ? 1 : 0;
    const r = await this.#db.updateTable('styles').set(set).where('id', '=', id).returning(RECORD_COLUMNS).executeTakeFirst();
    return r && toStyle(r);
  }

  async markShareLink(id: string, now: number): Promise<boolean> {
    // Guarded: of two first requests, exactly one sees the row change.
    const r = await this.#db.updateTable('styles').set({ share_link_at: now }).where('id', '=', id).where('share_link_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async getArtifact(id: string): Promise<StoredArtifact | undefined> {
    const r = await this.#db.selectFrom('styles').select('artifact').where('id', '=', id).executeTakeFirst();
    return r && (JSON.parse(r.artifact) as StoredArtifact);
  }

  async holdsOutputKey(outputKey: string): Promise<boolean> {
    const r = await styleKeysKept(this.#db, [outputKey]).executeTakeFirst();
    return r !== undefined;
  }
}
