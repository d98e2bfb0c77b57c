// Room services/styles/: trained styles (LoRA): who sees and manages one, listing, sharing, and the artifact a running
// job applies.
// May import from services/: identity, common; test/unit/layers.test.ts holds the order.
import { forbidden, invalid, notFound } from '../../domain/error-catalogue.js';
import { EngineError } from '../../engines/engine.js';
import type { StyleArtifact } from '../../engines/engine.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { msToMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';
import { resolveUrl } from '../../lib/urls.js';
import { bodyValidator } from '../../models/validation.js';
import type { BodyValidator } from '../../models/validation.js';
import type { Store } from '../../store/store.js';
import type { StyleFilter, StylePatch, StyleRecord } from '../../store/style-store.js';
import type { AuthContext } from '../identity/identity.js';
import { pageOf } from '../common/paging.js';
import { owns, visibleStyle } from './style-inputs.js';
import { StylePatchRequest, toStyleView } from './style-view.js';
import type { ShareLinkView, SharedStyleView, StylePageView, StyleView, UnsharedStyleView } from './style-view.js';

/** A validated GET /styles query. */
export interface StyleListQuery {
  readonly limit: number;
  /** Only styles created strictly before this instant. */
  readonly before?: Micros;
  readonly ids?: readonly string[];
  readonly model?: string;
  readonly filter: StyleFilter;
}

const validatePatch: BodyValidator = bodyValidator(StylePatchRequest);

/**
 * Reading, changing and sharing styles (training them is a job: generation.ts). Who sees what is
 * style-inputs.ts's `canSee`; a style the caller may not see is 404 like an unknown one, and one it
 * sees but did not train is 403 for every change.
 */
export class StyleService {
  readonly #store: Store;
  readonly #clock: Clock;

  constructor(store: Store, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  #now(): Micros {
    return msToMicros(this.#clock.nowMs());
  }

  /** The workspace's styles the caller sees (another workspace's public ones are read by id). */
  async list(auth: AuthContext, query: StyleListQuery, publicUrl: string): Promise<StylePageView> {
    const ids = query.ids?.map((id) => id.toLowerCase());
    const rows = await this.#store.styles.listStyles({
      workspaceId: auth.workspace.id,
      memberEmail: auth.memberEmail,
      filter: query.filter,
      ...(ids ? { ids } : {}),
      ...(query.model !== undefined ? { model: query.model } : {}),
      ...(query.before !== undefined ? { before: query.before } : {}),
      limit: query.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, query.limit, (s) => s.createdAt);
    return { items: page.map((s) => toStyleView(s, auth.workspace.name, publicUrl)), next_cursor };
  }

  async get(auth: AuthContext, id: string, publicUrl: string): Promise<StyleView> {
    return this.#view(await this.#visible(auth, id), auth, publicUrl);
  }

  /** PATCH: title, public, urls, cover_url; a body with none of them (public null is none) is refused. */
  async update(auth: AuthContext, id: string, body: unknown, publicUrl: string): Promise<StyleView> {
    validatePatch(body);
    const patch: StylePatch = {
      ...(typeof body.title === 'string' ? { title: body.title } : {}),
      ...(typeof body.public === 'boolean' ? { public: body.public } : {}),
      ...(Array.isArray(body.urls) ? { urls: body.urls as string[] } : {}),
      ...(typeof body.cover_url === 'string' ? { coverUrl: body.cover_url } : {}),
    };
    if (Object.keys(patch).length === 0) throw invalid('no field to update: give at least one of title, public, urls and cover_url');
    const style = await this.#owned(auth, id, 'change it');
    const updated = await this.#store.styles.updateStyle(style.id, patch, this.#now());
    return this.#view(updated!, auth, publicUrl);
  }

  /** The style's link; `is_new` the first time anyone asks for it. */
  async shareLink(auth: AuthContext, id: string, publicUrl: string): Promise<ShareLinkView> {
    const style = await this.#owned(auth, id, 'get its share link');
    const isNew = await this.#store.styles.markShareLink(style.id, this.#now());
    return { share_link: resolveUrl(`styles/${style.id}`, publicUrl), is_new: isNew };
  }

  /** Every token of the workspace may then see and use it. Sharing a shared style is no error. */
  async shareWithWorkspace(auth: AuthContext, id: string): Promise<SharedStyleView> {
    const style = await this.#owned(auth, id, 'share it');
    if (!style.sharedWithWorkspace) await this.#store.styles.updateStyle(style.id, { sharedWithWorkspace: true }, this.#now());
    return { success: true, style_id: style.id, workspace: { id: auth.workspace.id, name: auth.workspace.name, is_default: true } };
  }

  /** Back to its trainer's tokens only (and everyone's, if it is public). */
  async unshareFromWorkspace(auth: AuthContext, id: string): Promise<UnsharedStyleView> {
    const style = await this.#owned(auth, id, 'stop sharing it');
    if (!style.sharedWithWorkspace) throw notFound(`style '${id}' is not shared with this workspace`);
    await this.#store.styles.updateStyle(style.id, { sharedWithWorkspace: false }, this.#now());
    return { success: true };
  }

  /** A style's artifact for a running job (its visibility was checked when the job was created). */
  async artifact(id: string): Promise<StyleArtifact> {
    const artifact = isUuid(id) ? await this.#store.styles.getArtifact(id.toLowerCase()) : undefined;
    if (!artifact) throw new EngineError('input_invalid', `style '${id}' not found`);
    return artifact;
  }

  async #visible(auth: AuthContext, id: string): Promise<StyleRecord> {
    const style = await visibleStyle(this.#store.styles, auth, id);
    if (!style) throw notFound(`style '${id}' not found`);
    return style;
  }

  async #owned(auth: AuthContext, id: string, action: string): Promise<StyleRecord> {
    const style = await this.#visible(auth, id);
    if (!owns(style, auth)) throw forbidden(`only the member whose token trained style '${id}' can ${action}`);
    return style;
  }

  async #view(style: StyleRecord, auth: AuthContext, publicUrl: string): Promise<StyleView> {
    // Another workspace's style is seen only when public; its owner is named by its workspace.
    const owner = style.workspaceId === auth.workspace.id ? auth.workspace : await this.#store.identity.findWorkspace(style.workspaceId);
    return toStyleView(style, owner?.name ?? '', publicUrl);
  }
}
