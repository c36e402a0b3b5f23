import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { newId } from '../ids.js';
import { DAY_MS } from '../wallet/usage-rollup.js';
import type { RetentionTask } from '../retention/retention.js';
import { rowById, toRecord } from './records.js';
import type { OutboxKind, OutboxKindDef, OutboxRecord } from './types.js';

// Vendor callbacks that name a message id before the send job stored it: the vendor answered
// the send and posted a status at once, while the job had not committed yet. They are kept
// here and applied in the transaction that records the id, or, when the record has it by the
// time the callback is kept, at once. A day is long enough for a job to recover a crashed send.

export const EARLY_TABLE = 'outbox_early';
export const EARLY_TTL_MS = DAY_MS;

/**
 * One vendor message id at a time between the callback that keeps and the send that records
 * it, so neither misses the other: PostgreSQL takes a transaction lock on the pair; SQLite
 * runs one transaction at a time already.
 */
async function lockVendorMessage(trx: Kysely<any>, vendor: string, vendorMessageId: string): Promise<void> {
  if (trx.getExecutor().adapter instanceof PostgresAdapter)
    await sql`select pg_advisory_xact_lock(hashtext(${`outbox-early/${vendor}/${vendorMessageId}`}))`.execute(trx);
}

/**
 * In the transaction that moved the record to sent with this vendor id: the callbacks kept
 * for it, applied in the order they came and removed.
 */
export async function applyKept<D>(
  trx: Kysely<any>,
  def: OutboxKindDef<D, any, any>,
  kind: OutboxKind<D, any>,
  record: OutboxRecord<D>
): Promise<void> {
  if (!def.applyEarly || !record.vendor || !record.vendorMessageId) return;
  await lockVendorMessage(trx, record.vendor, record.vendorMessageId);
  const rows = await trx
    .selectFrom(EARLY_TABLE)
    .selectAll()
    .where('kind', '=', def.kind)
    .where('vendor', '=', record.vendor)
    .where('vendor_message_id', '=', record.vendorMessageId)
    .where('expires_at', '>', Date.now())
    .orderBy('received_at')
    .orderBy('early_id')
    .execute();
  for (const r of rows) {
    // Each callback sees the record as the one before it left it.
    const current = toRecord<D>(await rowById(trx, record.id, def.kind));
    await def.applyEarly(trx, current, JSON.parse(r.payload), kind);
    await trx.deleteFrom(EARLY_TABLE).where('early_id', '=', r.early_id).execute();
  }
}

let lastKept = 0;

/** A callback for an id no record has yet: applied if one has it by now (under the lock), else kept. */
export async function keepEarly<D>(
  db: Kysely<any>,
  def: OutboxKindDef<D, any, any>,
  kind: OutboxKind<D, any>,
  vendor: string,
  vendorMessageId: string,
  payload: unknown
): Promise<'applied' | 'kept'> {
  return db.transaction().execute(async (trx) => {
    await lockVendorMessage(trx, vendor, vendorMessageId);
    const rec = await kind.findByVendorMessage(vendor, vendorMessageId, trx);
    if (rec && def.applyEarly) {
      await def.applyEarly(trx, rec, payload, kind);
      return 'applied';
    }
    // Strictly increasing on this node, so two callbacks of one millisecond keep their order.
    const now = (lastKept = Math.max(Date.now(), lastKept + 1));
    await trx
      .insertInto(EARLY_TABLE)
      .values({
        early_id: newId('oe'),
        kind: def.kind,
        vendor,
        vendor_message_id: vendorMessageId,
        payload: JSON.stringify(payload),
        received_at: now,
        expires_at: now + EARLY_TTL_MS,
      })
      .execute();
    return 'kept';
  });
}

/** Retention of kept callbacks no send claimed (a message of another gateway, a send that failed). */
export function earlyRetention(db: Kysely<any>): RetentionTask {
  return {
    name: 'outbox_early',
    days: 1,
    sweep: async (before, limit) => {
      const old = db.selectFrom(EARLY_TABLE).select('early_id').where('expires_at', '<', before).limit(limit);
      const r = await db.deleteFrom(EARLY_TABLE).where('early_id', 'in', old).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
