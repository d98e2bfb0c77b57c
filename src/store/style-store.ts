import type { Micros } from '../lib/time.js';

/** A trained style's artifact: a JSON object only engines read (EngineContext.loadStyle). */
export type StoredArtifact = Readonly<Record<string, unknown>>;

/**
 * A style (LoRA) a training job made. It belongs to the workspace's API user and to the member
 * whose token trained it; `sharedWithWorkspace` lets the workspace's other tokens see it, `public`
 * every token of every workspace (docs/styles.md). The artifact is stored apart from the record: lists never read it.
 */
export interface StyleRecord {
  readonly id: string;
  readonly workspaceId: string;
  readonly apiUserId: string;
  /** The email of the member whose token created the training job; null if unknown. */
  readonly trainedBy: string | null;
  /** The training job; it may have been deleted since (the style stays). */
  readonly jobId: string | null;
  readonly title: string | null;
  /** The base model it was trained for: flux_dev, wan, ... */
  readonly model: string;
  /** The training type (Style, Object, Character, Default), when the request named one. */
  readonly type: string | null;
  readonly triggerWord: string | null;
  readonly public: boolean;
  readonly sharedWithWorkspace: boolean;
  /** Preview URLs, as given (a stored output's URL is kept relative: `/outputs/<key>/<name>`). */
  readonly urls: readonly string[];
  readonly coverUrl: string | null;
  /**
   * The training job's output key, where its cover file is: kept (and served) while the style
   * lives, even once the job is deleted.
   */
  readonly outputKey: string | null;
  readonly likeCount: number;
  /** When a share link was first asked for; null: never. */
  readonly shareLinkAt: Micros | null;
  /** Strictly increasing per workspace, so a time cursor over styles is exact. */
  readonly createdAt: Micros;
  readonly updatedAt: Micros;
}

export interface NewStyle {
  readonly id: string;
  readonly workspaceId: string;
  readonly apiUserId: string;
  readonly trainedBy: string | null;
  readonly jobId: string | null;
  readonly title: string | null;
  readonly model: string;
  readonly type: string | null;
  readonly triggerWord: string | null;
  readonly urls: readonly string[];
  readonly coverUrl: string | null;
  readonly outputKey: string | null;
  readonly artifact: StoredArtifact;
}

/** Which of a workspace's styles a member's token lists. */
export type StyleFilter = 'all' | 'user' | 'shared';

export interface StyleQuery {
  readonly workspaceId: string;
  readonly memberEmail: string;
  /**
   * user: trained by this member; shared: another member's, shared with the workspace or public;
   * all: both (every style of the workspace the member sees).
   */
  readonly filter: StyleFilter;
  /** Only these ids (others simply match nothing). */
  readonly ids?: readonly string[];
  /** Only styles of this base model. */
  readonly model?: string;
  /** Only styles created strictly before this instant. */
  readonly before?: Micros;
  readonly limit: number;
}

/** Fields PATCH and sharing change; absent ones are left as they are. */
export interface StylePatch {
  readonly title?: string;
  readonly public?: boolean;
  readonly urls?: readonly string[];
  readonly coverUrl?: string;
  readonly sharedWithWorkspace?: boolean;
}

export interface StyleStore {
  /**
   * Stores a style. Its created_at is `now`, or one microsecond after the workspace's newest style
   * if that is later (as assets do). Where writers take row locks (PostgreSQL) it locks the
   * workspace row first (a no-op for a caller holding it: a job's end does). One style per job.
   */
  insertStyle(style: NewStyle, now: Micros): Promise<StyleRecord>;
  /** The style, whoever owns it: the service decides who may see it. */
  getStyle(id: string): Promise<StyleRecord | undefined>;
  /** A workspace's styles as a member's token lists them, newest first. */
  listStyles(query: StyleQuery): Promise<StyleRecord[]>;
  /** Applies the patch and sets updated_at; undefined if there is no such style. */
  updateStyle(id: string, patch: StylePatch, now: Micros): Promise<StyleRecord | undefined>;
  /** Records the first share link at `now`: true if this call did, false if one was asked for before. */
  markShareLink(id: string, now: Micros): Promise<boolean>;
  getArtifact(id: string): Promise<StoredArtifact | undefined>;
  /** Whether a style keeps files under this output key (its cover). */
  holdsOutputKey(outputKey: string): Promise<boolean>;
}
