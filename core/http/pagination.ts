import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { fieldError } from '../errors.js';

export const ListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Items a page (max 200).' }),
    cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page.' })),
  },
  { additionalProperties: false }
);
export type ListQueryT = Static<typeof ListQuery>;

/** `{ items, next_cursor }`, the shape of every list. */
export function Page<T extends TSchema>(item: T) {
  return Type.Object({ items: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) });
}

export interface CursorPos {
  t: number;
  id: string;
}

/** Opaque cursors: the (created_at, id) of the last item, newest-first order. */
export function encodeCursor(pos: CursorPos): string {
  return Buffer.from(JSON.stringify([pos.t, pos.id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): CursorPos | undefined {
  if (!cursor) return undefined;
  try {
    const [t, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof t === 'number' && typeof id === 'string') return { t, id };
  } catch {
    /* fall through */
  }
  throw fieldError('cursor', 'is not valid', 'cursor is not a cursor this gateway handed out.');
}

/** Fetch limit+1 rows, return a page and the cursor of its last item when there is more. */
export function pageOf<R, I>(rows: R[], limit: number, pos: (r: R) => CursorPos, map: (r: R) => I) {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { items: page.map(map), next_cursor: more ? encodeCursor(pos(page[page.length - 1])) : null };
}
