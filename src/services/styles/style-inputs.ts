import { invalid } from '../../domain/error-catalogue.js';
import { isUuid } from '../../lib/ids.js';
import type { StyleRecord, StyleStore } from '../../store/style-store.js';
import type { AuthContext } from '../identity/identity.js';
import { isPlainObject } from '../../lib/plain-object.js';

/**
 * Who sees a style (spec 5.5, docs/styles.md), the one rule: the member whose token trained it, the
 * workspace's other tokens once it is shared with the workspace, and every token of every workspace
 * once it is public (the original API's meaning). Lists show the workspace's styles this admits
 * (SqlStyleStore.listStyles); another workspace's public style is read and used by id only.
 */
export function canSee(style: StyleRecord, auth: AuthContext): boolean {
  return style.public || (style.workspaceId === auth.workspace.id && (style.sharedWithWorkspace || style.trainedBy === auth.memberEmail));
}

/** Who may change or share a style: only the member whose token trained it, through any of their tokens. */
export function owns(style: StyleRecord, auth: AuthContext): boolean {
  return style.workspaceId === auth.workspace.id && style.trainedBy !== null && style.trainedBy === auth.memberEmail;
}

/** The style of this id the caller may see; undefined for an unknown, malformed or invisible id alike. */
export async function visibleStyle(styles: Pick<StyleStore, 'getStyle'>, auth: AuthContext, id: string): Promise<StyleRecord | undefined> {
  const style = isUuid(id) ? await styles.getStyle(id.toLowerCase()) : undefined;
  return style && canSee(style, auth) ? style : undefined;
}

/**
 * A generation request's `styles: [{id, strength}]` (model-a-2, and any body with such a field):
 * each id must name a style the caller may use, or the request is invalid_request naming the item.
 * An invisible style reads as unknown, so its existence is not given away.
 */
export async function checkStyleInputs(styles: Pick<StyleStore, 'getStyle'>, auth: AuthContext, body: Readonly<Record<string, unknown>>): Promise<void> {
  const items = body.styles;
  if (!Array.isArray(items)) return;
  for (const [i, item] of items.entries()) {
    const id = isPlainObject(item) ? item.id : undefined;
    if (typeof id !== 'string') continue;
    if (!(await visibleStyle(styles, auth, id))) {
      throw invalid(
        `styles[${i}].id names a style that does not exist or that this token may not use; train one with POST /styles/train, or ask the member who trained it to share it with the workspace`,
      );
    }
  }
}
