import { BUILTIN_IMAGE_MODELS, BUILTIN_MODELS } from './models.js';
import type { ModelEntry, Task } from './types.js';

export type { ModelEntry, Task } from './types.js';

/** The model catalog: built-in rows, then the operator's `plugins.ai.models` (same id and vendor replaces). */
export class Catalog {
  private readonly entries: ModelEntry[];

  constructor(extra: ModelEntry[] = []) {
    const byKey = new Map<string, ModelEntry>();
    for (const m of [...BUILTIN_MODELS, ...BUILTIN_IMAGE_MODELS, ...extra]) byKey.set(`${m.vendor}\u0000${m.id}`, m);
    this.entries = [...byKey.values()];
  }

  all(): readonly ModelEntry[] {
    return this.entries;
  }

  /** The entry for a model as served by a vendor (adapter or preset name); any vendor when none given. */
  find(id: string, vendor?: string): ModelEntry | undefined {
    return (vendor && this.entries.find((m) => m.id === id && m.vendor === vendor)) || this.entries.find((m) => m.id === id);
  }

  forVendor(vendor: string, capability: ModelEntry['capabilities'][number] = 'chat'): ModelEntry[] {
    return this.entries.filter((m) => m.vendor === vendor && m.capabilities.includes(capability));
  }

  fits(m: ModelEntry, task: Task): boolean {
    return m.tasks.includes(task);
  }
}

/** Cost in micro-USD of a number of tokens at a price per million, rounded up. */
export function tokenCost(tokens: number, perMillion: number): number {
  return Math.ceil((Math.max(0, tokens) * perMillion) / 1_000_000);
}
