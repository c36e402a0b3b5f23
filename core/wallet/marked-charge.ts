import type { Kysely } from 'kysely';
import { isApiError } from '../errors.js';
import type { Wallet } from './wallet.js';

// Charging usage counted in a row (bytes stored, served, carried through a tunnel) from a
// timer that every node runs. The row keeps "billed" marks next to its counters; a charge
// moves the marks with a compare-and-set in the debit's own transaction, so when several
// nodes read the same counters and charge at once, exactly one moves the marks and debits,
// and a debit the wallet refuses leaves the marks where they were, to be charged next run.

export interface MarkedCharge {
  /** The table that holds the counters and their marks. */
  table: string;
  /** The row: its key column(s) and value(s). */
  row: Record<string, string>;
  /** The marks as read with the counters: the charge happens only while they are still these. */
  marks: Record<string, number>;
  /** The marks once these counters are charged. */
  next: Record<string, number>;
  accountId: string;
  /** Integer micro-USD, at least 1. */
  micros: number;
  /** The ledger entry's ref and capability. */
  ref: string;
  capability: string;
}

/**
 * Debits `c.micros` from the account while moving the row's marks from `c.marks` to `c.next`,
 * all or nothing. Returns the micro-USD charged: 0 when another node moved the marks first, or
 * when the balance cannot cover it (logged as `what`: the same usage is charged next run).
 */
export async function chargeMarked(
  db: Kysely<any>,
  wallet: Wallet,
  log: { warn(obj: object, msg: string): void },
  what: string,
  c: MarkedCharge
): Promise<number> {
  try {
    return await db.transaction().execute(async (trx) => {
      let update = trx.updateTable(c.table).set(c.next);
      for (const [col, v] of Object.entries({ ...c.row, ...c.marks })) update = update.where(col, '=', v);
      const moved = await update.executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return 0; // another node charged it
      await wallet.debit(c.accountId, c.micros, 'usage', c.ref, trx, { capability: c.capability });
      return c.micros;
    });
  } catch (e) {
    if (!(isApiError(e) && e.code === 'insufficient_balance')) throw e;
    log.warn({ account_id: c.accountId, micros: c.micros }, `${what}: balance too low; charged next run`);
    return 0;
  }
}
