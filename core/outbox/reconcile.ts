import type { VendorRegistry } from '../router/registry.js';
import type { CapabilityImpl } from '../vendor-api.js';
import type { OpenAttempt } from './records.js';
import { routeOf } from './records.js';
import type { OutboxKind, OutboxKindDef } from './types.js';

/** What a recorded attempt whose outcome was lost comes to. */
export type Reconciled =
  | { found: { vendor: string; output: unknown } }
  | { resend: true }
  | { unknown: true; why: 'no_lookup' | 'claimed' };

/** How long one vendor's lookup may take before the job tries again later. */
const FIND_MS = 30_000;

/**
 * Each vendor that may have been called on the open attempt is asked, when it offers the
 * kind's `find` capability, whether it took the message: one that did makes the record sent
 * with its answer (no resend). None did: resend, when every vendor without a lookup honours
 * idempotency keys; otherwise nobody can say (`unknown`). A lookup that fails throws: the job
 * tries again later, the attempt still open.
 */
export async function reconcile<D>(
  vendors: VendorRegistry,
  def: OutboxKindDef<D, any, any>,
  kind: OutboxKind<D, any>,
  row: any,
  open: OpenAttempt,
  signal: AbortSignal
): Promise<Reconciled> {
  const send = JSON.parse(row.input);
  const plans = new Map(routeOf(row).map((r) => [r.id, r.plan]));
  let unsure = false;
  for (const v of open.vendors) {
    const caps = vendors.get(v)?.instance.capabilities;
    const find = def.find ? (caps?.[def.find] as CapabilityImpl | undefined) : undefined;
    if (!find) {
      if (caps?.[def.capability]?.idempotencyKeys !== true) unsure = true;
      continue;
    }
    const output = await find.invoke(
      { send, since: open.at },
      {
        signal: AbortSignal.any([signal, AbortSignal.timeout(FIND_MS)]),
        deadline: Date.now() + FIND_MS,
        accountId: row.account_id,
        plan: plans.get(v),
      }
    );
    if (output === null || output === undefined) continue;
    // The same text to the same number twice in a minute: a message another record already
    // owns is not this one's, and which one is cannot be told.
    const id = def.vendorMessageId?.(output);
    const owner = id ? await kind.findByVendorMessage(v, id) : undefined;
    if (owner && owner.id !== row.record_id) return { unknown: true, why: 'claimed' };
    return { found: { vendor: v, output } };
  }
  return unsure ? { unknown: true, why: 'no_lookup' } : { resend: true };
}
