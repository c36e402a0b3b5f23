import type { AnyImpl } from '../vendor-api.js';
import type { AreaPrice, CapabilitySpec } from '../capability-spec.js';
import type { Hold, Wallet } from '../wallet/wallet.js';
import type { Db } from '../wallet/kysely-wallet.js';
import type { Planned, Routed } from './planner.js';
import type { Step } from './step.js';

// What a call costs, the one arithmetic of calls, streams and reservations made ahead (a batch):
// the adapter's price() or the area's price, the operator's markup, the BYOK fee, the cost cap.

/** What `router.reserve` is given: the account, the planned candidates in order, the cost cap. */
export interface ReserveOptions {
  accountId: string;
  route: Array<Routed<Planned>>;
  /** Keep only candidates whose estimate is within this × the primary's (default 1.5). */
  maxCostMultiplier?: number;
  /** The capability the hold is recorded under, when it pays for more than this call (a batch). */
  holdCapability?: string;
  /**
   * The caller's transaction: the hold is taken in it, and so exists iff the caller's writes
   * commit (an outbox record). Without one the wallet commits the hold at once.
   */
  trx?: Db;
  /** When the hold's owner gives up at the latest; it expires after that (the wallet's grace added). */
  deadline?: number;
}

export interface Reservation {
  hold: Hold;
  /** The candidates within the cost cap, in the order given. */
  route: Array<Routed<Planned>>;
}

/** Vendor cost with the operator's markup, rounded up to the micro-USD. */
export function charged(markup: number, vendor: string, vendorMicros: number): number {
  // A NaN would reach the wallet's arithmetic; this is a bug in the adapter, not the caller's.
  if (typeof vendorMicros !== 'number' || !Number.isFinite(vendorMicros)) {
    throw new Error(`vendor ${vendor}: the price returned ${String(vendorMicros)}, not a number of micro-USD`);
  }
  return Math.ceil(Math.max(0, vendorMicros) * markup);
}

/** What pricing one step is given: the area's price (where the area prices the capability), the adapter, the call. */
export interface PriceArgs {
  areaPrice: AreaPrice | undefined;
  impl: AnyImpl;
  step: Step;
  input: unknown;
  /** Absent before the call (the estimate); the output, or a stream's usage, after it. */
  output?: unknown;
}

/**
 * What a step costs before the markup: the area's price where the area prices the capability
 * (nothing on the caller's own key, which pays the vendor: the fee is added apart), else the
 * adapter's price() with the step's own plan.
 */
export function vendorMicros({ areaPrice, impl, step, input, output }: PriceArgs): number {
  if (areaPrice) return step.byok ? 0 : areaPrice(input, output);
  return impl.price!(input, output, step.plan);
}

/** A step's charge: its vendor cost with the markup, plus the BYOK fee as it is. */
export function stepCharge(markup: number, a: PriceArgs): number {
  return charged(markup, a.step.cand.id, vendorMicros(a)) + (a.step.byok?.fee ?? 0);
}

/** A bug of the area's, not the caller's: say which hook is missing rather than call an absent price(). */
export function assertPriced(spec: CapabilitySpec, capability: string, areaPrice: AreaPrice | undefined): void {
  if (spec.areaPriced && !areaPrice) throw new Error(`capability ${capability} is area-priced, and no price is set`);
}

/** `max_cost_multiplier` when the caller sets none. */
export const DEFAULT_COST_MULTIPLIER = 1.5;

/** Which estimates a failover may go to: the primary, and those within `cap` × the primary's. */
export function costCap(estimates: number[], cap: number): boolean[] {
  return estimates.map((e, i) => i === 0 || e <= estimates[0] * cap);
}

/**
 * A reservation made ahead of a call settled later (a batch): the steps priced as a call prices
 * them, those past the cost cap left out, one hold for the dearest left.
 */
export async function reserveAhead(
  wallet: Wallet,
  markup: number,
  areaPrice: AreaPrice | undefined,
  capability: string,
  input: unknown,
  steps: Step[],
  opts: ReserveOptions
): Promise<Reservation> {
  const impl = (s: Step) => s.cand.instance.capabilities[capability] as AnyImpl;
  const estimates = steps.map((step) => stepCharge(markup, { areaPrice, impl: impl(step), step, input }));
  const within = costCap(estimates, opts.maxCostMultiplier ?? DEFAULT_COST_MULTIPLIER);
  const amount = Math.max(...estimates.filter((_, i) => within[i]));
  const hold = await wallet.reserve(opts.accountId, amount, opts.holdCapability ?? capability, opts.deadline, opts.trx);
  const kept = new Set(steps.filter((_, i) => within[i]).map((s) => s.cand.id));
  return { hold, route: opts.route.filter((r) => kept.has(r.id)) };
}
