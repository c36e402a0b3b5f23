import { BUILTIN_IMAGE_MODELS, BUILTIN_MODELS } from './models.js';
import { SPEECH_MODELS } from './speech-models.js';
import type { ModelEntry, Task } from './types.js';

/** What a catalog row is for: chat models, embedding models, speech synthesis, transcription. */
export type ModelKind = ModelEntry['capabilities'][number];

export type { ModelEntry, Task } from './types.js';

/** The model catalog: built-in rows, then the operator's `plugins.ai.models` (same id and vendor replaces). */
export class Catalog {
  private readonly entries: ModelEntry[];

  constructor(extra: ModelEntry[] = []) {
    const byKey = new Map<string, ModelEntry>();
    for (const m of [...BUILTIN_MODELS, ...BUILTIN_IMAGE_MODELS, ...SPEECH_MODELS, ...extra]) byKey.set(`${m.vendor}\u0000${m.id}`, m);
    this.entries = [...byKey.values()];
  }

  all(): readonly ModelEntry[] {
    return this.entries;
  }

  /** The entry for a model as served by a vendor (adapter or preset name); any vendor when none given. */
  find(id: string, vendor?: string): ModelEntry | undefined {
    return (vendor && this.entries.find((m) => m.id === id && m.vendor === vendor)) || this.entries.find((m) => m.id === id);
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
