import type { SelectQueryBuilder } from 'kysely';
import type { CursorPos } from '../http/pagination.js';

/**
 * A list query's page, newest first: the rows after `pos` (the (created_at, id) of the last
 * row of the page before, as the cursor holds it), ordered by created_at and then `idColumn`
 * so rows created in the same millisecond still page in one stable order; `limit` of them.
 */
export function newestFirst<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  idColumn: string,
  limit: number,
  pos?: CursorPos
): SelectQueryBuilder<DB, TB, O> {
  let page = q as SelectQueryBuilder<any, any, O>;
  if (pos)
    page = page.where((eb) =>
      eb.or([eb('created_at', '<', pos.t), eb.and([eb('created_at', '=', pos.t), eb(idColumn, '<', pos.id)])])
    );
  return page.orderBy('created_at', 'desc').orderBy(idColumn, 'desc').limit(limit) as SelectQueryBuilder<DB, TB, O>;
}
