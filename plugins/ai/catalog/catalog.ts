import type { ModelEntry, ModelKind, Task } from '../../../core/kit/area.js';

export type { ModelEntry, ModelKind, Task } from '../../../core/kit/area.js';

/**
 * The model catalog: the rows the vendors in use declare (declared-models.ts), then the
 * operator's `plugins.ai.models` (same id and vendor replaces).
 */
export class Catalog {
  private readonly entries: ModelEntry[];

  constructor(declared: readonly ModelEntry[], extra: ModelEntry[] = []) {
    const byKey = new Map<string, ModelEntry>();
    for (const m of [...declared, ...extra]) byKey.set(`${m.vendor}\u0000${m.id}`, m);
    this.entries = [...byKey.values()];
  }

  all(): readonly ModelEntry[] {
    return this.entries;
  }

  /** The entry for a model as served by a vendor (adapter or preset name); any vendor when none given. */
  find(id: string, vendor?: string): ModelEntry | undefined {
    const own = vendor ? this.entries.find((m) => m.id === id && m.vendor === vendor) : undefined;
    return own ?? this.entries.find((m) => m.id === id);
  }

  // Asked on every call for the same few vendors; the catalog never changes once built.
  private readonly byVendor = new Map<string, readonly ModelEntry[]>();

  forVendor(vendor: string, capability: ModelKind = 'chat'): readonly ModelEntry[] {
    const key = `${vendor}\u0000${capability}`;
    let list = this.byVendor.get(key);
    if (!list) {
      list = this.entries.filter((m) => m.vendor === vendor && m.capabilities.includes(capability));
      this.byVendor.set(key, list);
    }
    return list;
  }

  fits(m: ModelEntry, task: Task): boolean {
    return m.tasks.includes(task);
  }
}

/** Cost in micro-USD of a number of tokens at a price per million, rounded up. */
export function tokenCost(tokens: number, perMillion: number): number {
  return Math.ceil((Math.max(0, tokens) * perMillion) / 1_000_000);
}
