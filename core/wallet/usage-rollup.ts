import { sql, type Kysely } from 'kysely';

// Retention of the wallet's usage entries (one a metered call): the oldest are deleted in
// batches and their sums added to wallet_usage_daily, in the same transaction, so what
// GET /v1/account/usage adds up never changes. Only `usage` entries go: top-ups, trials,
// tier charges and refunds are few and stay as the account's money history.

export const DAY_MS = 86_400_000;

/** What the report groups by: the UTC day (days since the epoch) and the capability. */
export function usageCapability(capability: string | null): string {
  return capability ?? 'other';
}

interface Sum {
  account_id: string;
  day: number;
  capability: string;
  micros: number;
  calls: number;
}

/**
 * Delete up to `limit` usage entries created before `before` (oldest first) and add them to
 * the daily sums; returns how many went. Each entry is deleted once (DELETE … RETURNING), so a
 * batch run twice, or on two nodes, never counts an entry twice.
 */
export async function rollUpUsage(db: Kysely<any>, before: number, limit: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const oldest = trx
      .selectFrom('wallet_ledger')
      .select('entry_id')
      .where('kind', '=', 'usage')
      .where('created_at', '<', before)
      .orderBy('created_at')
      .limit(limit);
    const gone = await trx
      .deleteFrom('wallet_ledger')
      .where('entry_id', 'in', oldest)
      .returning(['account_id', 'capability', 'amount_micros', 'created_at'])
      .execute();
    const sums = new Map<string, Sum>();
    for (const r of gone) {
      const day = Math.floor(Number(r.created_at) / DAY_MS);
      const capability = usageCapability(r.capability as string | null);
      const key = `${r.account_id}\n${day}\n${capability}`;
      const s = sums.get(key) ?? { account_id: r.account_id as string, day, capability, micros: 0, calls: 0 };
      s.micros += Number(r.amount_micros);
      s.calls += 1;
      sums.set(key, s);
    }
    if (sums.size) {
      await trx
        .insertInto('wallet_usage_daily')
        .values([...sums.values()])
        .onConflict((oc) =>
          oc.columns(['account_id', 'day', 'capability']).doUpdateSet({
            micros: sql`wallet_usage_daily.micros + excluded.micros`,
            calls: sql`wallet_usage_daily.calls + excluded.calls`,
          })
        )
        .execute();
    }
    return gone.length;
  });
}
