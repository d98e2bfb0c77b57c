import { Type } from '@sinclair/typebox';
import { formatMicros } from '../../lib/time.js';
import type { Micros } from '../../lib/time.js';

/**
 * Paging, the one rule every list of the API shares: a page of rows and its `next_cursor`, the
 * time of the page's last row. Each list's own item view lives with the concept it shows.
 */

/**
 * A page of `limit` rows from a query asked for `limit + 1`: the extra row tells whether another
 * page exists, so the last page says null. The cursor is the last row's time (`at`).
 */
export function pageOf<R>(rows: readonly R[], limit: number, at: (row: R) => Micros): { page: R[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  return { page, next_cursor: rows.length > limit ? formatMicros(at(page[page.length - 1]!)) : null };
}

/** A page's `next_cursor`: the last item's time (`what`), or null on the last page. */
export const Cursor = (what: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: `Pass as \`cursor\` for the next page (${what}); null on the last page.`,
    examples: ['2026-11-22T12:00:00.000000Z'],
  });
