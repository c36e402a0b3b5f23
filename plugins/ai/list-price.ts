import type { CapabilitySpec, ListPrice } from '../../core/kit/area.js';
import type { Catalog, ModelEntry, ModelKind } from './catalog/catalog.js';
import { vendorKey } from './planner.js';

interface Rule {
  kind: ModelKind;
  unit: string;
  /** Micro-USD per unit from a catalog row; the catalog keeps per-million prices. */
  micros(e: ModelEntry): number;
}

const tokens: Omit<Rule, 'kind'> = { unit: '1m_input_tokens', micros: (e) => e.price.in };
const image: Omit<Rule, 'kind'> = { unit: 'image', micros: (e) => e.price.image ?? 0 };

// What discovery shows per capability: the input side for token-priced models (the output
// side costs more per token, but how many is up to the caller's max_tokens).
const RULES: Record<string, Rule> = {
  'ai.chat': { kind: 'chat', ...tokens },
  'ai.chat.stream': { kind: 'chat', ...tokens },
  'ai.vision': { kind: 'vision', ...tokens },
  'ai.vision.stream': { kind: 'vision', ...tokens },
  'ai.embed': { kind: 'embed', ...tokens },
  'ai.tts': { kind: 'tts', unit: '1k_characters', micros: (e) => (e.price.per_million_chars ?? 0) / 1000 },
  'ai.asr': { kind: 'asr', unit: 'minute', micros: (e) => e.price.per_minute ?? 0 },
  'ai.image': { kind: 'image', ...image },
  'ai.image.edit': { kind: 'image_edit', ...image },
  'ai.image.variation': { kind: 'image_variation', ...image },
};

/**
 * The catalog's price of a capability on an instance, for discovery: its cheapest model, among
 * the models the instance is restricted to when it is. A restricted chat or embedding model the
 * catalog does not know is a local one and free, as the planner treats it.
 */
function cheapest(catalog: Catalog, capability: string, rule: Rule): NonNullable<CapabilitySpec['listPrice']> {
  return (inst): ListPrice | null => {
    const key = vendorKey(inst);
    const restricted = inst.instance.capabilities[capability]?.models;
    const local = rule.kind === 'chat' || rule.kind === 'embed';
    const priceOf = (e: ModelEntry | undefined) => {
      if (!e) return local ? 0 : undefined;
      return e.capabilities.includes(rule.kind) ? rule.micros(e) : undefined;
    };
    const prices = restricted?.length
      ? restricted.map((m) => priceOf(catalog.find(m, key)))
      : catalog.forVendor(key, rule.kind).map(rule.micros);
    const known = prices.filter((p): p is number => p !== undefined);
    return known.length ? { unit: rule.unit, micros: Math.min(...known) } : null;
  };
}

/** The AI capabilities with their catalog list price, for the app's capability map. */
export function pricedCapabilities(
  specs: Record<string, CapabilitySpec>,
  catalog: Catalog
): Array<[string, CapabilitySpec]> {
  return Object.entries(specs).map(([cap, spec]) => {
    const rule = RULES[cap];
    return [cap, rule ? { ...spec, listPrice: cheapest(catalog, cap, rule) } : spec];
  });
}
