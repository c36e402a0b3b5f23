import type { Kysely } from 'kysely';
import { decodeCursor, iso, newestFirst, newId, pageOf, type ListQueryT } from '../../core/kit/area.js';
import type { EventBodyT } from './metric-schemas.js';

const wire = (r: any) => ({
  event_id: r.event_id as string,
  event: r.event as string,
  distinct_id: (r.distinct_id ?? null) as string | null,
  properties: JSON.parse(r.properties) as Record<string, unknown>,
  created_at: iso(Number(r.created_at)),
});

/** Custom events (POST /v1/observability/events): one row each, read back newest first. */
export class EventStore {
  constructor(private readonly db: Kysely<any>) {}

  async add(accountId: string, e: EventBodyT): Promise<string> {
    const id = newId('evt');
    await this.db
      .insertInto('obs_events')
      .values({
        event_id: id,
        account_id: accountId,
        event: e.event,
        distinct_id: e.distinct_id ?? null,
        properties: JSON.stringify(e.properties ?? {}),
        created_at: Date.now(),
      })
      .execute();
    return id;
  }

  async list(accountId: string, q: ListQueryT & { event?: string }) {
    let query = this.db.selectFrom('obs_events').selectAll().where('account_id', '=', accountId);
    if (q.event) query = query.where('event', '=', q.event);
    const rows = await newestFirst(query, 'event_id', q.limit + 1, decodeCursor(q.cursor)).execute();
    return pageOf(rows, q.limit, (r: any) => ({ t: Number(r.created_at), id: r.event_id }), wire);
  }

  async sweep(before: number, limit: number): Promise<number> {
    const old = this.db.selectFrom('obs_events').select('event_id').where('created_at', '<', before).limit(limit);
    const r = await this.db.deleteFrom('obs_events').where('event_id', 'in', old).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
