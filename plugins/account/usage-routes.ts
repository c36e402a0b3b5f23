import type { FastifyInstance, FastifyRequest } from 'fastify';
import { iso, microsToUsd, DAY_MS, fieldError } from '../../core/kit/area.js';
import { usageBuckets } from './usage-query.js';
import { UsageQuery, UsageReport, type UsageQueryT } from './usage-schemas.js';

const DEFAULT_RANGE_MS = 30 * DAY_MS;

function parseTime(value: string | undefined, param: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw fieldError(param, 'is not a valid ISO 8601 timestamp');
  return ms;
}

/** GET /v1/account/usage: the caller's charged calls, summed by UTC day or by capability. */
export function registerUsageRoutes(app: FastifyInstance): void {
  app.get(
    '/v1/account/usage',
    {
      config: { scope: 'account:read', operation: 'account.usage' },
      schema: {
        summary: 'What the account spent, by day or by capability',
        description:
          "Sums the wallet's usage entries between `from` (inclusive) and `to` (exclusive); default the last 30 days. Entries older than the retention are kept as daily sums and count by whole UTC day.",
        tags: ['account'],
        querystring: UsageQuery,
        response: { 200: UsageReport },
      },
    },
    async (req: FastifyRequest<{ Querystring: UsageQueryT }>) => {
      const to = parseTime(req.query.to, 'to') ?? Date.now();
      const from = parseTime(req.query.from, 'from') ?? to - DEFAULT_RANGE_MS;
      if (from >= to) throw fieldError('from', 'must be before to');
      const byDay = req.query.group_by === 'day';
      const rows = await usageBuckets(app.svc.db, req.principal!.accountId, from, to, byDay);
      let total = 0;
      const items = rows.map((r) => {
        const spent = -Number(r.micros);
        total += spent;
        const key = byDay ? { day: iso(Number(r.bucket) * DAY_MS).slice(0, 10) } : { capability: String(r.bucket) };
        return { ...key, cost_usd: microsToUsd(spent), calls: Number(r.calls) };
      });
      return { items, from: iso(from), to: iso(to), total_usd: microsToUsd(total) };
    }
  );
}
