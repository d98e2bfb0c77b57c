// The tables of what a workspace makes and keeps (node apps 0005/0012, assets 0011, styles 0013),
// apart to keep schema.ts short; times in microseconds.

/** A workspace's user-built node apps; versions are numbered and timed from counters on this row. */
export interface NodeAppsTable {
  id: string;
  workspace_id: string;
  name: string;
  /** Unique within the workspace. */
  slug: string;
  description: string;
  scope: string;
  /** The creating member's email. */
  author_id: string;
  created_at: number;
  updated_at: number;
  /** The newest version's number (0 before the first publish); the next is one more. */
  last_version: number;
  /** The newest version's creation time; the next is strictly later, so a version cursor is exact. */
  last_version_us: number;
}

export interface NodeAppVersionsTable {
  id: string;
  node_app_id: string;
  version: number;
  created_at: number;
  /** JSON objects, as text. */
  input_schema: string;
  output_schema: string;
  /** A JSON array of URL strings. */
  example_outputs: string;
  /** The publishing member's email. */
  published_by: string;
  /** The version's graph as JSON text, or null for a version without one. */
  graph: string | null;
}

/**
 * Files a workspace uploaded (POST /assets); the bytes live in the output store under
 * `output_key`. A deleted asset stays as a tombstone (`deleted_at` set) while a job created
 * before the deletion and not yet ended may still read its file.
 */
export interface AssetsTable {
  id: string;
  workspace_id: string;
  /** The output-store key of the file: unique among assets, random like a job's output key. */
  output_key: string;
  file_name: string;
  size_bytes: number;
  mime_type: string;
  width: number | null;
  height: number | null;
  description: string | null;
  /** A JSON object, as text. */
  metadata: string;
  /** Strictly increasing per workspace, so a time cursor over assets is exact. */
  created_at: number;
  /** Null while live; the deletion time on a tombstone. */
  deleted_at: number | null;
}

/**
 * Styles (LoRA) made by training jobs (docs/styles.md): the record, and the opaque artifact the
 * engines read. Booleans 0/1, times in microseconds.
 */
export interface StylesTable {
  id: string;
  workspace_id: string;
  api_user_id: string;
  trained_by: string | null;
  /** No foreign key: the style outlives a deleted training job. Unique: one style per job. */
  job_id: string | null;
  title: string | null;
  model: string;
  type: string | null;
  trigger_word: string | null;
  public: number;
  shared_with_workspace: number;
  /** A JSON array of URL strings. */
  urls: string;
  cover_url: string | null;
  /** The training job's output key: its cover file is kept and served while the style lives. */
  output_key: string | null;
  /** The artifact, a JSON object as text (at most 64 KiB). */
  artifact: string;
  like_count: number;
  share_link_at: number | null;
  /** Strictly increasing per workspace, so a time cursor over styles is exact. */
  created_at: number;
  updated_at: number;
}
