import { sql, type Kysely } from 'kysely';
import { type DialectName, base62 } from '../../core/kit/area.js';

// Pull consumers of a queue. A receive hides the messages it returns for the visibility
// timeout and gives each a receipt handle for this receive only; a message not acked in time
// becomes visible again, and one received `maxReceives` times without an ack moves to the
// dead-letter list. The claim is the jobs engine's: one UPDATE of the rows a sub-select picks,
// FOR UPDATE SKIP LOCKED on PostgreSQL, so two consumers never get the same message at once.

export interface MessageRow {
  message_id: string;
  payload: string;
  receive_count: number;
  receipt_handle: string;
  created_at: number;
}

export async function receive(
  db: Kysely<any>,
  dialect: DialectName,
  accountId: string,
  queue: string,
  max: number,
  visibilityMs: number,
  maxReceives: number
): Promise<MessageRow[]> {
  const now = Date.now();
  const visible = (qb: any) =>
    qb
      .where('account_id', '=', accountId)
      .where('queue', '=', queue)
      .where('state', '=', 'ready')
      .where('visible_at', '<=', now);
  await visible(db.updateTable('queue_messages'))
    .where('receive_count', '>=', maxReceives)
    .set({
      state: 'dead',
      dead_reason: `received ${maxReceives} times without an ack`,
      receipt_handle: null,
      updated_at: now,
    })
    .execute();
  const nonce = base62(12);
  const set = {
    receipt_handle: sql`'rh_' || queue_messages.message_id || '_' || ${nonce}`,
    visible_at: now + visibilityMs,
    receive_count: sql`receive_count + 1`,
    updated_at: now,
  };
  const cols = ['message_id', 'payload', 'receive_count', 'receipt_handle', 'created_at'] as const;
  let rows: unknown[];
  if (dialect === 'postgres') {
    // A materialized pick, run once: as an `IN (…)` sub-select with SKIP LOCKED PostgreSQL may
    // re-run it per updated row and hand out more than `max` (see core/jobs/store.ts).
    rows = await db
      .with(
        (w) => w('picked').materialized(),
        (d) =>
          visible(d.selectFrom('queue_messages').select('message_id'))
            .orderBy('visible_at')
            .orderBy('message_id')
            .limit(max)
            .forUpdate()
            .skipLocked()
      )
      .updateTable('queue_messages')
      .set(set)
      .from('picked')
      .whereRef('queue_messages.message_id', '=', 'picked.message_id')
      .returning(cols.map((c) => `queue_messages.${c}` as const))
      .execute();
  } else {
    const pick = visible(db.selectFrom('queue_messages').select('message_id'))
      .orderBy('visible_at')
      .orderBy('message_id')
      .limit(max);
    rows = await visible(db.updateTable('queue_messages'))
      .where('message_id', 'in', pick)
      .set(set)
      .returning([...cols])
      .execute();
  }
  return (rows as MessageRow[]).sort((a, b) => a.created_at - b.created_at || a.message_id.localeCompare(b.message_id));
}

/** Delete the messages whose current receipt handles these are; a stale handle acks nothing. */
export async function ack(db: Kysely<any>, accountId: string, queue: string, handles: string[]): Promise<number> {
  const r = await db
    .deleteFrom('queue_messages')
    .where('account_id', '=', accountId)
    .where('queue', '=', queue)
    .where('state', '=', 'ready')
    .where('receipt_handle', 'in', handles)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
