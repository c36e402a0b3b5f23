import type { FastifyInstance, FastifyRequest } from 'fastify';
import { iso } from '../../core/clock.js';
import { apiError } from '../../core/errors.js';
import { microsToUsd } from '../../core/wallet/money.js';
import { DAY_MS } from '../../core/wallet/usage-rollup.js';
import { usageBuckets } from './usage-query.js';
import { UsageQuery, UsageReport, type UsageQueryT } from './usage-schemas.js';

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
      if (from >= to) throw badParam('from', 'must be before to');
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
