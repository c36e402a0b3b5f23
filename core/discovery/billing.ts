import type { Svc } from '../context.js';
import type { ListPrice } from '../capability-spec.js';
import type { RouteEntry } from './route-registry.js';
import type { DiscoveryItemT } from './schemas.js';

/**
 * The `billing` line of an operation. A route that charges by itself (storage by the GiB, a
 * third-party area's flat fee) declares `config.billing`; otherwise the price is the one the
 * router charges: the lowest list price among the instances that serve the capability for the
 * operator (BYOK-only ones bill the caller's own account), times `wallet.markup`, rounded up
 * to the micro-USD as the router rounds a charge. Null when nothing prices it or it can be free.
 */
export function billingOf(svc: Svc, route: RouteEntry): DiscoveryItemT['billing'] {
  if (route.config.billing) return route.config.billing;
  const cap = route.config.capability;
  const spec = cap ? svc.capabilities.get(cap) : undefined;
  if (!cap || !spec?.listPrice) return null;
  let lowest: ListPrice | null = null;
  for (const inst of svc.vendors.serving(cap)) {
    if (inst.byokOnly) continue;
    const price = spec.listPrice(inst);
    if (price && (!lowest || price.micros < lowest.micros)) lowest = price;
  }
  if (!lowest || lowest.micros <= 0) return null;
  return { unit: lowest.unit, price_usd: Math.ceil(lowest.micros * svc.config.wallet.markup) / 1_000_000 };
}
