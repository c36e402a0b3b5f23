import type { FastifyRequest } from 'fastify';
import { usdToMicros, type Svc } from '../../core/kit/area.js';
import type { AnalyticsConfigT } from './config.js';

/** The discovery line of a price as configured; none when it is 0. */
export function billingLine(unit: string, price_usd: number): { unit: string; price_usd: number } | undefined {
  return price_usd > 0 ? { unit, price_usd } : undefined;
}

/**
 * Runs a query charged query_price_usd: held before it runs (402 when the balance cannot cover
 * it, and nothing runs), charged when it answered, given back when it failed or timed out.
 */
export async function chargedQuery<T>(
  svc: Svc,
  cfg: AnalyticsConfigT,
  req: FastifyRequest,
  run: () => Promise<T>
): Promise<T> {
  const micros = usdToMicros(cfg.query_price_usd);
  req.meter.metered = true;
  if (micros <= 0) return run();
  const hold = await svc.wallet.reserve(req.principal!.accountId, micros, 'analytics.query');
  let out: T;
  try {
    out = await run();
  } catch (e) {
    await svc.wallet.release(hold);
    throw e;
  }
  req.meter.costMicros += await svc.wallet.settle(hold, micros, { ref: req.id });
  return out;
}
