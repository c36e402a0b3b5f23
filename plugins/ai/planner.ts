import {
  inRegion,
  type RegisteredInstance,
  type Planned,
  type Planner,
  type PlanRequest,
  type RouteCandidate,
  type CandidatePlan,
} from '../../core/kit/area.js';
import type { Catalog, ModelEntry, ModelKind, Task } from './catalog/catalog.js';

export type Prefer = 'balanced' | 'cheapest' | 'smartest';

/** The capabilities the AI area plans by model catalog. */
export const PLANNED_CAPABILITIES = [
  'ai.chat',
  'ai.chat.stream',
  'ai.embed',
  'ai.tts',
  'ai.asr',
  'ai.vision',
  'ai.vision.stream',
  'ai.image',
  'ai.image.edit',
  'ai.image.variation',
] as const;
export type PlannedCapability = (typeof PLANNED_CAPABILITIES)[number];

/** The AI area's planning input: what the request asks of a model beside the router's pin, model and region. */
export interface AiPlanInput {
  task: Task;
  prefer: Prefer;
  needs: Array<'tools' | 'json'>;
}

export interface Candidate extends Planned<CandidatePlan> {
  entry: ModelEntry;
  plan: CandidatePlan;
}

/** The catalog's vendor name for an instance: its openai-compatible preset, else its adapter. */
export function vendorKey(inst: RegisteredInstance): string {
  const preset = inst.redactedConfig?.preset;
  if (typeof preset === 'string') return preset;
  return inst.adapter === 'openai-compatible' ? inst.id : inst.adapter;
}

/** The price a plan carries: per million tokens (chat, embed), characters (tts) or per minute (asr). */
function unitPrice(e: ModelEntry, kind: ModelKind): { price_in: number; price_out: number } {
  if (kind === 'tts') return { price_in: e.price.per_million_chars ?? 0, price_out: 0 };
  if (kind === 'asr') return { price_in: e.price.per_minute ?? 0, price_out: 0 };
  return { price_in: e.price.in, price_out: e.price.out };
}

/** A model an instance's config names but the catalog does not know: a local model, free. */
function localEntry(id: string, vendor: string, kind: Kind): ModelEntry {
  return {
    id,
    vendor,
    family: id,
    tasks: ['general', 'reasoning', 'coding', 'long_context'],
    quality: 30,
    context_window: 8192,
    max_output: 4096,
    price: { in: 0, out: 0 },
    capabilities: kind === 'chat' ? ['chat', 'tools', 'json'] : kind === 'embed' ? ['embed'] : [],
    regions: ['global'],
  };
}

type Kind = ModelEntry['capabilities'][number];
// Vision, image and speech models are never guessed: an unknown model needs a catalog entry saying it can.
const KIND: Record<PlannedCapability, Kind> = {
  'ai.chat': 'chat',
  'ai.chat.stream': 'chat',
  'ai.embed': 'embed',
  'ai.vision': 'vision',
  'ai.vision.stream': 'vision',
  'ai.image': 'image',
  'ai.image.edit': 'image_edit',
  'ai.image.variation': 'image_variation',
  'ai.tts': 'tts',
  'ai.asr': 'asr',
};

/** The plan of one catalog row on one instance: the caller's key at the platform fee, else the catalog's prices. */
function planOf(c: RouteCandidate, entry: ModelEntry, kind: Kind): CandidatePlan {
  if (c.byok) return { model: entry.id, price_in: 0, price_out: 0, fee: c.byok.fee, credentials: c.byok.credentials };
  return {
    model: entry.id,
    ...unitPrice(entry, kind as ModelKind),
    fee: 0,
    ...(entry.price.image !== undefined ? { price_image: entry.price.image } : {}),
  };
}

/**
 * The AI area's planner hook: which model each candidate instance is asked for, and in what
 * order. The router has applied the pin, the route and the instance regions, and offers the
 * caller's BYOK credentials per instance (it puts those candidates first). `model` pins a
 * model, else `task` picks the fitting models and `prefer` orders them (cheapest by price,
 * smartest by quality rank, balanced by both); model rows outside the region are dropped.
 */
export function catalogPlanner(catalog: Catalog): Planner<AiPlanInput, Candidate> {
  // Without a caller's key, a plan follows from the request and the instances offered alone, and
  // the catalog and the instances are fixed at boot: each distinct call is planned once, not on
  // every request. Frozen, as calls share it. Bounded, since `model` is whatever the caller sent.
  const memo = new Map<string, Candidate[]>();
  return (req, candidates) => {
    if (candidates.some((c) => c.byok)) return planModels(catalog, req, candidates);
    const { capability, region, vendor, model, request } = req;
    const ids = candidates.map((c) => c.instance.id).join('\u0001');
    const key = [
      capability,
      region,
      vendor,
      model,
      request?.task,
      request?.prefer,
      request?.needs?.join(','),
      ids,
    ].join('\u0000');
    let planned = memo.get(key);
    if (!planned) {
      planned = Object.freeze(planModels(catalog, req, candidates).map(frozen)) as Candidate[];
      if (memo.size >= PLAN_MEMO_SIZE) memo.clear();
      memo.set(key, planned);
    }
    return planned;
  };
}

const PLAN_MEMO_SIZE = 1000;

function frozen(c: Candidate): Candidate {
  Object.freeze(c.plan);
  return Object.freeze(c);
}

function planModels(catalog: Catalog, req: PlanRequest<AiPlanInput>, candidates: RouteCandidate[]): Candidate[] {
  const kind = KIND[req.capability as PlannedCapability];
  const pairs: Candidate[] = [];
  const own = new Set<string>();
  for (const c of candidates) {
    const inst = c.instance;
    if (c.byok) own.add(inst.id);
    const key = vendorKey(inst);
    const restricted = inst.instance.capabilities[req.capability]?.models;
    let entries = catalog.forVendor(key, kind);
    if (restricted?.length) {
      // Unknown names are local chat or embedding models; a speech model must be in the catalog.
      entries = restricted
        .map(
          (m) => catalog.find(m, key) ?? (kind === 'chat' || kind === 'embed' ? localEntry(m, key, kind) : undefined)
        )
        .filter((e): e is ModelEntry => !!e && e.capabilities.includes(kind));
    }
    for (const entry of entries) {
      // A pinned model keeps only its own rows (the pool below would drop the rest anyway).
      if (req.model && entry.id !== req.model) continue;
      // The router refuses a pin whose models serve only other regions (region_not_allowed).
      if (!inRegion(entry.regions, req.region)) continue;
      pairs.push({ id: inst.id, entry, plan: planOf(c, entry, kind) });
    }
  }
  let pool: Candidate[];
  if (req.model) {
    pool = pairs; // only the pinned model's rows were kept
  } else {
    pool = pairs.filter((p) => p.entry.tasks.includes(req.request.task));
    if (!pool.length) pool = pairs;
    const capable = pool.filter((p) => req.request.needs.every((n) => p.entry.capabilities.includes(n)));
    if (capable.length) pool = capable;
  }
  const ranked = rank(pool, req.request.prefer);
  // One model per instance (the router tries each instance once), BYOK instances first.
  const seen = new Set<string>();
  const out: Candidate[] = [];
  for (const c of [...ranked.filter((c) => own.has(c.id)), ...ranked.filter((c) => !own.has(c.id))]) {
    if (seen.has(c.id)) continue;
    seen.add(c.id);
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
  for (const [i, c] of byPrice.entries()) score.set(c, i);
  for (const [i, c] of bySmarts.entries()) score.set(c, (score.get(c) ?? 0) + i);
  return [...pool].sort((a, b) => score.get(a)! - score.get(b)! || b.entry.quality - a.entry.quality);
}
