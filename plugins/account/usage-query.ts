import { sql, type Kysely, type RawBuilder } from 'kysely';
import { DAY_MS, usageCapability } from '../../core/kit/area.js';

export interface UsageBucket {
  /** Days since the epoch (by day) or the capability. */
  bucket: number | string;
  micros: number;
  calls: number;
}

/**
 * What an account's usage entries add up to in [from, to), by UTC day or capability, oldest day
 * or first capability first. Entries past `retention.ledger_days` live on as daily sums
 * (core/wallet/usage-rollup.ts): a rolled-up day counts when its start is in [from, to), so a
 * range on whole UTC days answers the same before and after the entries are rolled up.
 */
export async function usageBuckets(
  db: Kysely<any>,
  accountId: string,
  from: number,
  to: number,
  byDay: boolean
): Promise<UsageBucket[]> {
  // One expression for select and group by: PostgreSQL matches them by text, so no parameters.
  const bucket: RawBuilder<number | string> = byDay
    ? sql<number>`created_at / ${sql.lit(DAY_MS)}`
    : sql<string>`coalesce(capability, ${sql.lit(usageCapability(null))})`;
  const entries = await db
    .selectFrom('wallet_ledger')
    .select([bucket.as('bucket'), sql<string>`sum(amount_micros)`.as('micros'), sql<string>`count(*)`.as('calls')])
    .where('account_id', '=', accountId)
    .where('kind', '=', 'usage')
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .groupBy(bucket)
    .execute();
  const rolled = await db
    .selectFrom('wallet_usage_daily')
    .select([
      byDay ? 'day as bucket' : 'capability as bucket',
      sql<string>`sum(micros)`.as('micros'),
      sql<string>`sum(calls)`.as('calls'),
    ])
    .where('account_id', '=', accountId)
    .where('day', '>=', Math.ceil(from / DAY_MS))
    .where('day', '<', Math.ceil(to / DAY_MS))
    .groupBy(byDay ? 'day' : 'capability')
    .execute();
  const out = new Map<string, UsageBucket>();
  for (const r of [...entries, ...rolled]) {
    const key = byDay ? Number(r.bucket) : String(r.bucket);
    const b = out.get(String(key)) ?? { bucket: key, micros: 0, calls: 0 };
    b.micros += Number(r.micros);
    b.calls += Number(r.calls);
    out.set(String(key), b);
  }
  const order = (b: UsageBucket) => b.bucket;
  return [...out.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}
