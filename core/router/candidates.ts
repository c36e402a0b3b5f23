import { apiError } from '../errors.js';
import type { AnyImpl } from '../vendor-api.js';
import type { CredentialsProvider } from './credentials.js';
import type { Planned, Planner, PlannerOptions, Routed } from './planner.js';
import type { RegisteredInstance, VendorRegistry } from './registry.js';
import { noVendor } from './no-vendor.js';

/** What a call asks of its candidates: a pinned instance, a model, the account's region. */
export interface Selection {
  /** Pin one configured instance: its id, adapter, or openai-compatible preset. */
  vendor?: string;
  model?: string;
  region?: string;
}

/** Whether something serving `regions` (an instance, a model's catalog row) serves the account's region. */
export function inRegion(regions: readonly string[], region: string | undefined): boolean {
  return !region || region === 'auto' || regions.includes('global') || regions.includes(region);
}

/** A vendor the caller pinned exists, but not for the account's region (for that model): a refusal, not an outage. */
function regionNotAllowed(sel: Selection) {
  const what = sel.model ? `model "${sel.model}" ` : '';
  return apiError(
    'region_not_allowed',
    `Vendor "${sel.vendor}" does not serve ${what}in the account's region (${sel.region}).`,
    { param: 'vendor' }
  );
}

function pins(inst: RegisteredInstance, vendor: string): boolean {
  return inst.id === vendor || inst.adapter === vendor || inst.redactedConfig?.preset === vendor;
}

function servesModel(impl: AnyImpl | undefined, model: string): boolean {
  return !!impl && (!impl.models || impl.models.length === 0 || impl.models.includes(model));
}

/**
 * The instances a call may go to before any planning: a pin chooses among every configured
 * instance (`routes` orders and limits automatic routing only), else the route's targets; the
 * region keeps those serving it, and a pinned instance outside it is a refusal (403).
 */
function pool(
  registry: VendorRegistry,
  capability: string,
  sel: Selection,
  docs?: string,
  hint?: string
): RegisteredInstance[] {
  const all = sel.vendor ? registry.configured(capability) : registry.serving(capability);
  let list = all;
  if (sel.vendor) {
    list = all.filter((c) => pins(c, sel.vendor!));
    const configured = all.filter((c) => !c.byokOnly).map((c) => c.id);
    if (!list.length) throw noVendor({ capability, vendor: sel.vendor, configured, docs, hint });
  }
  const inReg = list.filter((c) => inRegion(c.regions, sel.region));
  if (sel.vendor && list.length && !inReg.length) throw regionNotAllowed(sel);
  return inReg;
}

/** Candidates without a planner: the pool's instances serving the model, never a BYOK-only one. */
export function selectCandidates(
  registry: VendorRegistry,
  capability: string,
  sel: Selection,
  opts: PlannerOptions = {}
): RegisteredInstance[] {
  let list = pool(registry, capability, sel, opts.docs, opts.hint).filter((c) => !c.byokOnly);
  if (sel.model) list = list.filter((c) => servesModel(c.instance.capabilities[capability], sel.model!));
  return list;
}

export interface PlanCall<Q> extends Selection {
  accountId: string;
  request: Q;
}

/**
 * Candidates with the area's planner: the pool, each with the caller's credentials for it
 * (BYOK-only instances only with some), ordered and planned by the planner, the caller's own
 * credentials first. Nothing left is the one no_vendor_available.
 */
export async function planCandidates<Q, C extends Planned>(
  registry: VendorRegistry,
  provider: CredentialsProvider | undefined,
  capability: string,
  planner: Planner<Q, C>,
  opts: PlannerOptions,
  call: PlanCall<Q>
): Promise<Routed<C>[]> {
  const list = pool(registry, capability, call, opts.docs, opts.hint);
  const creds =
    provider && list.length
      ? await provider.credentials(call.accountId, list)
      : new Map<string, Record<string, string>>();
  const fee = provider?.feeMicros() ?? 0;
  const offered = list.flatMap((instance) => {
    const credentials = creds.get(instance.id);
    if (instance.byokOnly && !credentials) return [];
    return [{ instance, ...(credentials ? { byok: { credentials, fee } } : {}) }];
  });
  const byId = new Map(offered.map((c) => [c.instance.id, c]));
  const { accountId, region, vendor, model, request } = call;
  const plan = (where: string | undefined) =>
    planner({ capability, accountId, region: where, vendor, model, request }, offered).filter((p) => byId.has(p.id));
  const planned = plan(region).map((p): Routed<C> => {
    const byok = byId.get(p.id)!.byok;
    return byok ? { ...p, byok } : p;
  });
  if (!planned.length) {
    // The pinned instances serve the region, but the planner kept nothing of theirs there (a
    // model's catalog rows are of other regions) and would elsewhere: the same refusal.
    if (vendor && region && region !== 'auto' && plan('auto').length) throw regionNotAllowed(call);
    throw noVendor({ capability, model, region, param: model ? 'model' : undefined, docs: opts.docs, hint: opts.hint });
  }
  return [...planned.filter((p) => p.byok), ...planned.filter((p) => !p.byok)];
}
