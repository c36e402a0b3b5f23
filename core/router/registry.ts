import type { VendorDefinition, VendorInstance } from '../define.js';

export interface RegisteredInstance {
  /** Instance id from the config (`openai`, `ollama`), or the adapter name for embedded defaults. */
  id: string;
  adapter: string;
  regions: string[];
  def: VendorDefinition;
  instance: VendorInstance;
  /** Config with secret fields replaced, safe for logs, doctor and discovery. */
  redactedConfig: Record<string, unknown>;
}

/** The configured vendor instances, in config order, and which capabilities each serves. */
export class VendorRegistry {
  private readonly list: RegisteredInstance[] = [];
  private readonly order = new Map<string, string[]>();

  add(inst: RegisteredInstance): void {
    this.list.push(inst);
  }

  /** Route order for a capability from the config's `routes:`. */
  setRoute(capability: string, targets: string[]): void {
    this.order.set(capability, targets);
  }

  all(): readonly RegisteredInstance[] {
    return this.list;
  }

  get(id: string): RegisteredInstance | undefined {
    return this.list.find((i) => i.id === id);
  }

  serving(capability: string): RegisteredInstance[] {
    const serving = this.list.filter((i) => capability in i.instance.capabilities);
    const route = this.order.get(capability);
    if (!route) return serving;
    return route.map((id) => serving.find((s) => s.id === id)).filter((s): s is RegisteredInstance => !!s);
  }

  async closeAll(): Promise<void> {
    for (const i of this.list) await i.instance.close?.();
  }
}
