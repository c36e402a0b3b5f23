import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql, type RawBuilder } from 'kysely';
import { iso } from '../../core/clock.js';
import { apiError } from '../../core/errors.js';
import { microsToUsd } from '../../core/wallet/money.js';
import { UsageQuery, UsageReport, type UsageQueryT } from './usage-schemas.js';

const DAY_MS = 86_400_000;
const DEFAULT_RANGE_MS = 30 * DAY_MS;

function badParam(param: string, message: string) {
  return apiError('validation_failed', `${param} ${message}.`, { param, details: { errors: [{ param, message }] } });
}

function parseTime(value: string | undefined, param: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw badParam(param, 'is not a valid ISO 8601 timestamp');
  return ms;
}

/** GET /v1/account/usage: the caller's charged calls, summed by UTC day or by capability. */
export function registerUsageRoutes(app: FastifyInstance): void {
  app.get('/v1/account/usage', {
    config: { scope: 'account:read', operation: 'account.usage' },
    schema: {
      summary: 'What the account spent, by day or by capability',
      description: 'Sums the wallet\'s usage entries between `from` (inclusive) and `to` (exclusive); default the last 30 days.',
      tags: ['account'], querystring: UsageQuery, response: { 200: UsageReport },
    },
  }, async (req: FastifyRequest<{ Querystring: UsageQueryT }>) => {
    const to = parseTime(req.query.to, 'to') ?? Date.now();
    const from = parseTime(req.query.from, 'from') ?? to - DEFAULT_RANGE_MS;
    if (from >= to) throw badParam('from', 'must be before to');
    const byDay = req.query.group_by === 'day';
    // One expression for select and group by: PostgreSQL matches them by text, so no parameters.
    const bucket: RawBuilder<number | string> = byDay ? sql<number>`created_at / ${sql.lit(DAY_MS)}` : sql<string>`coalesce(capability, ${sql.lit('other')})`;
    const rows = await app.svc.db.selectFrom('wallet_ledger')
      .select([bucket.as('bucket'), sql<string>`sum(amount_micros)`.as('micros'), sql<string>`count(*)`.as('calls')])
      .where('account_id', '=', req.principal!.accountId)
      .where('kind', '=', 'usage')
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .groupBy(bucket)
      .orderBy('bucket')
      .execute();
    let total = 0;
    const items = rows.map((r) => {
      const spent = -Number(r.micros);
      total += spent;
      const key = byDay ? { day: iso(Number(r.bucket) * DAY_MS).slice(0, 10) } : { capability: String(r.bucket) };
      return { ...key, cost_usd: microsToUsd(spent), calls: Number(r.calls) };
    });
    return { items, from: iso(from), to: iso(to), total_usd: microsToUsd(total) };
  });
}
