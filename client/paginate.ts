/** One page of any list: every list route answers `{ items, next_cursor }`. */
export interface PageOf<T> {
  items: T[];
  next_cursor: string | null;
}

/** Walk a `{ items, next_cursor }` list to its end, one request a page, as late as possible. */
export async function* paginate<T>(page: (cursor: string | undefined) => Promise<PageOf<T>>): AsyncIterableIterator<T> {
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    yield* p.items;
    cursor = p.next_cursor ?? undefined;
  } while (cursor);
}
