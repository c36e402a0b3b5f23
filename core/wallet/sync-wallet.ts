import { newId } from '../ids.js';
import type { SyncSqlite } from '../db/open.js';

// The wallet's statements written out for SQLite and run synchronously on the connection,
// for the hot path of metered calls (reserve, settle, release): Kysely's transaction costs
// several promises and an acquired connection per statement, more than the statements
// themselves. The same SQL as wallet.ts builds with Kysely, so both paths are one ledger;
// PostgreSQL (and SQLite while a Kysely transaction holds the connection) uses wallet.ts's.
// `held`: the account's holds kept in memory (memory-holds.ts), still part of its balance
// column, which no take may spend.

const TAKE =
  'update "wallets" set "balance_micros" = "balance_micros" - ?, "updated_at" = ? where "account_id" = ? and "balance_micros" >= ?';
const GIVE = 'update "wallets" set "balance_micros" = "balance_micros" + ?, "updated_at" = ? where "account_id" = ?';
const CHARGE = 'update "wallets" set "balance_micros" = "balance_micros" - ?, "updated_at" = ? where "account_id" = ?';
const BALANCE = 'select "balance_micros" from "wallets" where "account_id" = ?';
const HOLD =
  'insert into "wallet_holds" ("hold_id", "account_id", "amount_micros", "capability", "created_at", "expires_at") values (?, ?, ?, ?, ?, ?)';
const UNHOLD = 'delete from "wallet_holds" where "hold_id" = ?';
const UNHOLD_EXPIRED = 'delete from "wallet_holds" where "hold_id" = ? and "expires_at" < ?';
const ENTRY =
  'insert into "wallet_ledger" ("entry_id", "account_id", "amount_micros", "kind", "ref", "capability", "vendor", "quantity", "created_at") values (?, ?, ?, ?, ?, ?, ?, ?, ?)';

type SettledHold = { holdId: string; accountId: string; amount: number; capability: string };
type SettleMeta = { vendor?: string; ref?: string; quantity?: number };

export function syncBalance(db: SyncSqlite, accountId: string): number {
  const row = db.get(BALANCE, [accountId]) as { balance_micros: number } | undefined;
  return row ? Number(row.balance_micros) : 0;
}

/** Take `micros` if the balance covers it and `held` (the account's holds kept in memory) beside it. */
function take(db: SyncSqlite, accountId: string, micros: number, held: number): boolean {
  return micros === 0 || db.run(TAKE, [micros, Date.now(), accountId, micros + held]) === 1;
}

/** Hold `amount`; `false` (nothing written) when the balance cannot cover it. */
export function syncReserve(
  db: SyncSqlite,
  holdId: string,
  accountId: string,
  amount: number,
  capability: string,
  expiresAt: number,
  held: number
): boolean {
  return db.transaction(() => {
    if (!take(db, accountId, amount, held)) return false;
    db.run(HOLD, [holdId, accountId, amount, capability, Date.now(), expiresAt]);
    return true;
  });
}

/**
 * Settle a hold to `want`; returns what was charged (0 when the hold was settled already) and
 * the balance after it, read in the same transaction: the response's balance header then
 * costs no read transaction of its own.
 */
export function syncSettle(
  db: SyncSqlite,
  hold: SettledHold,
  want: number,
  meta: SettleMeta,
  held: number
): { charged: number; balance: number } {
  return db.transaction(() => {
    const charged = settleRows(db, hold, want, meta, held);
    return { charged, balance: syncBalance(db, hold.accountId) };
  });
}

function ledger(db: SyncSqlite, hold: SettledHold, charged: number, meta: SettleMeta): void {
  db.run(ENTRY, [
    newId('led'),
    hold.accountId,
    -charged,
    'usage',
    meta.ref ?? hold.holdId,
    hold.capability,
    meta.vendor ?? null,
    meta.quantity ?? null,
    Date.now(),
  ]);
}

function settleRows(db: SyncSqlite, hold: SettledHold, want: number, meta: SettleMeta, held: number): number {
  if (db.run(UNHOLD, [hold.holdId]) !== 1) return 0;
  let charged = want;
  if (want <= hold.amount) {
    const back = hold.amount - want;
    if (back > 0) db.run(GIVE, [back, Date.now(), hold.accountId]);
  } else {
    // Inside one synchronous transaction nothing can move the balance between the read
    // and the take: take the extra, or what is left of it.
    const extra = want - hold.amount;
    const left = Math.min(extra, syncBalance(db, hold.accountId) - held);
    charged = hold.amount + (left > 0 && take(db, hold.accountId, left, held) ? left : 0);
  }
  ledger(db, hold, charged, meta);
  return charged;
}

/**
 * Give a hold back in full (true when this call did); nothing when it was settled or released
 * already. With `expiredBefore`, only while it is still past that expiry (deleteHold's rule).
 */
export function syncRelease(
  db: SyncSqlite,
  hold: { holdId: string; accountId: string; amount: number },
  expiredBefore?: number
): boolean {
  return db.transaction(() => {
    const deleted =
      expiredBefore === undefined
        ? db.run(UNHOLD, [hold.holdId])
        : db.run(UNHOLD_EXPIRED, [hold.holdId, expiredBefore]);
    if (deleted !== 1) return false;
    db.run(GIVE, [hold.amount, Date.now(), hold.accountId]);
    return true;
  });
}

/** A charge of a hold kept in memory, decided at its settle (charge-queue.ts). */
export interface Charge extends SettledHold, SettleMeta {
  charged: number;
  /** When it was settled: the ledger row's time. */
  at: number;
}

/**
 * Write charges decided against the balance column minus the account's other holds: they fit
 * in the column, so each is a plain take, with its ledger row, all in one transaction.
 */
export function syncChargeMany(db: SyncSqlite, charges: readonly Charge[]): void {
  db.transaction(() => {
    for (const c of charges) {
      if (c.charged > 0) db.run(CHARGE, [c.charged, c.at, c.accountId]);
      db.run(ENTRY, [
        newId('led'),
        c.accountId,
        -c.charged,
        'usage',
        c.ref ?? c.holdId,
        c.capability,
        c.vendor ?? null,
        c.quantity ?? null,
        c.at,
      ]);
    }
  });
}
