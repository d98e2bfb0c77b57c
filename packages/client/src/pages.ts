/** Every item of a paged list, following `next_cursor` to the last page. */
export async function* pages<T>(fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.items;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}
