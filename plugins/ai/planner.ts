import type { RegisteredInstance, VendorRegistry } from '../../core/router/registry.js';
import { apiError } from '../../core/errors.js';
import { noVendor } from '../../core/router/no-vendor.js';
import type { Catalog, ModelEntry, ModelKind, Task } from './catalog/catalog.js';
import type { CandidatePlan } from '../../core/capabilities/ai/chat.js';
import { credentialsFor } from '../byok/providers.js';

export type Prefer = 'balanced' | 'cheapest' | 'smartest';

export interface PlanRequest {
  capability: 'ai.chat' | 'ai.chat.stream' | 'ai.embed' | 'ai.tts' | 'ai.asr' | 'ai.vision' | 'ai.vision.stream' | 'ai.image' | 'ai.image.edit' | 'ai.image.variation';
  model?: string;
  vendor?: string;
  task: Task;
  prefer: Prefer;
  /** The account's region (`auto` serves everywhere). */
  region: string;
  needs: Array<'tools' | 'json'>;
  /** The caller's active BYOK credentials, by provider. */
  byok: Map<string, Record<string, string>>;
  byokFeeMicros: number;
}

export interface Candidate {
  instanceId: string;
  entry: ModelEntry;
  plan: CandidatePlan;
  byok: boolean;
}

/** The catalog's vendor name for an instance: its openai-compatible preset, else its adapter. */
export function vendorKey(inst: RegisteredInstance): string {
  const preset = inst.redactedConfig?.preset;
  if (typeof preset === 'string') return preset;
  return inst.adapter === 'openai-compatible' ? inst.id : inst.adapter;
}

function inRegion(regions: string[], region: string): boolean {
  return region === 'auto' || regions.includes('global') || regions.includes(region);
}

/** The price a plan carries: per million tokens (chat, embed), characters (tts) or per minute (asr). */
function unitPrice(e: ModelEntry, kind: ModelKind): { price_in: number; price_out: number } {
  if (kind === 'tts') return { price_in: e.price.per_million_chars ?? 0, price_out: 0 };
  if (kind === 'asr') return { price_in: e.price.per_minute ?? 0, price_out: 0 };
  return { price_in: e.price.in, price_out: e.price.out };
}

/** A model an instance's config names but the catalog does not know: a local model, free. */
function localEntry(id: string, vendor: string, kind: Kind): ModelEntry {
  return { id, vendor, family: id, tasks: ['general', 'reasoning', 'coding', 'long_context'], quality: 30, context_window: 8192, max_output: 4096,
    price: { in: 0, out: 0 }, capabilities: kind === 'chat' ? ['chat', 'tools', 'json'] : kind === 'embed' ? ['embed'] : [], regions: ['global'] };
}

type Kind = ModelEntry['capabilities'][number];
// Vision, image and speech models are never guessed: an unknown model needs a catalog entry saying it can.
const KIND: Record<PlanRequest['capability'], Kind> = { 'ai.chat': 'chat', 'ai.chat.stream': 'chat', 'ai.embed': 'embed', 'ai.vision': 'vision', 'ai.vision.stream': 'vision', 'ai.image': 'image',
  'ai.image.edit': 'image_edit', 'ai.image.variation': 'image_variation', 'ai.tts': 'tts', 'ai.asr': 'asr' };

/**
 * Routing for the AI area: which vendor instances, with which model each, in what order.
 * `model` pins a model, else `task` picks the fitting models and `prefer` orders them
 * (cheapest by price, smartest by quality rank, balanced by both); `vendor` pins an instance
 * or adapter; the region filters; the caller's BYOK instances go first at the platform fee.
 * Instances that exist only for BYOK are used only with the caller's credentials.
 */
export function planCandidates(registry: VendorRegistry, catalog: Catalog, byokOnly: Set<string>, req: PlanRequest): Candidate[] {
  const kind = KIND[req.capability];
  // A pin picks among every configured instance: `routes` orders and limits automatic routing only.
  let instances = req.vendor ? registry.configured(req.capability) : registry.serving(req.capability);
  if (req.vendor) {
    instances = instances.filter((i) => i.id === req.vendor || i.adapter === req.vendor || vendorKey(i) === req.vendor);
    if (!instances.length) {
      const configured = registry.configured(req.capability).filter((i) => !byokOnly.has(i.id)).map((i) => i.id);
      throw noVendor({ capability: req.capability, vendor: req.vendor, configured, docs: 'docs/ai.md' });
    }
  }
  const pairs: Candidate[] = [];
  let outOfRegion = false; // something the request named was skipped for the account's region
  for (const inst of instances) {
    if (!inRegion(inst.regions, req.region)) {
      outOfRegion = true;
      continue;
    }
    const creds = credentialsFor(inst, req.byok);
    if (byokOnly.has(inst.id) && !creds) continue;
    const key = vendorKey(inst);
    const restricted = inst.instance.capabilities[req.capability]?.models;
    let entries = catalog.forVendor(key, kind);
    if (restricted?.length) {
      // Unknown names are local chat or embedding models; a speech model must be in the catalog.
      entries = restricted.map((m) => catalog.find(m, key) ?? (kind === 'chat' || kind === 'embed' ? localEntry(m, key, kind) : undefined))
        .filter((e): e is ModelEntry => !!e && e.capabilities.includes(kind));
    }
    for (const entry of entries) {
      // A pinned model keeps only its own rows (the pool below would drop the rest anyway).
      if (req.model && entry.id !== req.model) continue;
      if (!inRegion(entry.regions, req.region)) {
        outOfRegion = true;
        continue;
      }
      pairs.push({
        instanceId: inst.id, entry, byok: !!creds,
        plan: creds
          ? { model: entry.id, price_in: 0, price_out: 0, fee: req.byokFeeMicros, credentials: creds }
          : { model: entry.id, ...unitPrice(entry, kind), fee: 0, ...(entry.price.image !== undefined ? { price_image: entry.price.image } : {}) },
      });
    }
  }
  let pool: Candidate[];
  if (req.model) {
    pool = pairs; // only the pinned model's rows were kept
  } else {
    pool = pairs.filter((p) => p.entry.tasks.includes(req.task));
    if (!pool.length) pool = pairs;
    const capable = pool.filter((p) => req.needs.every((n) => p.entry.capabilities.includes(n)));
    if (capable.length) pool = capable;
  }
  if (!pool.length && req.vendor && outOfRegion) {
    // A vendor the caller pinned exists but not for this account's region: a refusal, not an outage.
    throw apiError('region_not_allowed', `Vendor "${req.vendor}" does not serve ${req.model ? `model "${req.model}" ` : ''}in the account's region (${req.region}).`, { param: 'vendor' });
  }
  if (!pool.length) {
    const { capability, model, region } = req;
    throw noVendor({ capability, model, region, param: model ? 'model' : undefined, docs: 'docs/ai.md' });
  }
  const ranked = rank(pool, req.prefer);
  // One model per instance (the router tries each instance once), BYOK instances first.
  const seen = new Set<string>();
  const out: Candidate[] = [];
  for (const c of [...ranked.filter((c) => c.byok), ...ranked.filter((c) => !c.byok)]) {
    if (seen.has(c.instanceId)) continue;
    seen.add(c.instanceId);
    out.push(c);
  }
  return out;
}

function blended(e: ModelEntry): number {
  return e.price.in + e.price.out + (e.price.per_million_chars ?? 0) + (e.price.per_minute ?? 0) + (e.price.image ?? 0);
}

function rank(pool: Candidate[], prefer: Prefer): Candidate[] {
  const byPrice = [...pool].sort((a, b) => blended(a.entry) - blended(b.entry) || b.entry.quality - a.entry.quality);
  const bySmarts = [...pool].sort((a, b) => b.entry.quality - a.entry.quality || blended(a.entry) - blended(b.entry));
  if (prefer === 'cheapest') return byPrice;
  if (prefer === 'smartest') return bySmarts;
  const score = new Map<Candidate, number>();
  byPrice.forEach((c, i) => score.set(c, i));
  bySmarts.forEach((c, i) => score.set(c, (score.get(c) ?? 0) + i));
  return [...pool].sort((a, b) => score.get(a)! - score.get(b)! || b.entry.quality - a.entry.quality);
}

export interface FlatCandidate {
  instanceId: string;
  byok: boolean;
  /** Micro-USD for the call: the area's flat price (0 with BYOK). */
  price: number;
  /** The BYOK platform fee (0 without): charged as it is, outside the markup (CallOptions.fees). */
  fee: number;
  credentials?: Record<string, string>;
}

/**
 * Routing for a capability priced per call rather than per model (live session tokens): every
 * instance serving it in the region, in route order, the caller's BYOK instances first at the
 * platform fee with their key, the rest at `priceMicros` with the operator's. BYOK-only
 * instances take part only with the caller's key. An empty list is the router's 503.
 */
export function planFlatCandidates(registry: VendorRegistry, byokOnly: Set<string>, req: {
  capability: string; region: string; byok: Map<string, Record<string, string>>; byokFeeMicros: number; priceMicros: number;
}): FlatCandidate[] {
  const out: FlatCandidate[] = [];
  for (const inst of registry.serving(req.capability)) {
    if (!inRegion(inst.regions, req.region)) continue;
    const creds = credentialsFor(inst, req.byok);
    if (creds) out.push({ instanceId: inst.id, byok: true, price: 0, fee: req.byokFeeMicros, credentials: creds });
    else if (!byokOnly.has(inst.id)) out.push({ instanceId: inst.id, byok: false, price: req.priceMicros, fee: 0 });
  }
  return [...out.filter((c) => c.byok), ...out.filter((c) => !c.byok)];
}
