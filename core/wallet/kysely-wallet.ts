import { sql, type Kysely, type Transaction } from 'kysely';
import { newId } from '../ids.js';

// The wallet's statements through Kysely: PostgreSQL's path, and SQLite's while a Kysely
// transaction holds the connection. sync-wallet.ts writes the same SQL out for SQLite's hot
// path, so both are one ledger. `held`: the account's holds kept in memory (memory-holds.ts),
// still part of its balance column, which no take may spend.

export type Db = Kysely<any> | Transaction<any>;

export type LedgerKind = 'trial' | 'topup' | 'usage' | 'tier' | 'admin' | 'refund';

/** Take `micros` if the balance column covers it and `held` beside it; false (nothing taken) if not. */
export async function take(q: Db, accountId: string, micros: number, held: number): Promise<boolean> {
  if (micros === 0) return true;
  const res = await q
    .updateTable('wallets')
    .set({ balance_micros: sql`balance_micros - ${micros}`, updated_at: Date.now() })
    .where('account_id', '=', accountId)
    .where('balance_micros', '>=', micros + held)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Put `micros` back on (or onto) the balance. */
export async function give(q: Db, accountId: string, micros: number): Promise<void> {
  await q
    .updateTable('wallets')
    .set({ balance_micros: sql`balance_micros + ${micros}`, updated_at: Date.now() })
    .where('account_id', '=', accountId)
    .execute();
}

export async function insertHold(
  q: Db,
  hold: { holdId: string; accountId: string; amount: number; capability: string },
  expiresAt: number
): Promise<void> {
  await q
    .insertInto('wallet_holds')
    .values({
      hold_id: hold.holdId,
      account_id: hold.accountId,
      amount_micros: hold.amount,
      capability: hold.capability,
      created_at: Date.now(),
      expires_at: expiresAt,
    })
    .execute();
}

/**
 * Delete a hold's row; false when it was settled or released already (the once-only guard). With
 * `expiredBefore`, only while it is still past that expiry (a hold refreshed meanwhile is kept).
 */
export async function deleteHold(q: Db, holdId: string, expiredBefore?: number): Promise<boolean> {
  let del = q.deleteFrom('wallet_holds').where('hold_id', '=', holdId);
  if (expiredBefore !== undefined) del = del.where('expires_at', '<', expiredBefore);
  return Number((await del.executeTakeFirst()).numDeletedRows) === 1;
}

/** One ledger row: `micros` signed, positive in, negative out. */
export async function entry(
  q: Db,
  accountId: string,
  micros: number,
  kind: LedgerKind,
  ref: string | null,
  meta: { capability?: string; vendor?: string; quantity?: number } = {}
): Promise<void> {
  await q
    .insertInto('wallet_ledger')
    .values({
      entry_id: newId('led'),
      account_id: accountId,
      amount_micros: micros,
      kind,
      ref,
      capability: meta.capability ?? null,
      vendor: meta.vendor ?? null,
      quantity: meta.quantity ?? null,
      created_at: Date.now(),
    })
    .execute();
}
