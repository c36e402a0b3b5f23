import { ConfigError } from '../../config/load.js';
import type { VendorDefinition, VendorInstance } from '../vendor-api.js';

/** `routes.<capability>.strategy`: the targets in the order given, or cheapest estimate first. */
export type RouteStrategy = 'fallback' | 'cheapest';

export interface RegisteredInstance {
  /** Instance id from the config (`openai`, `ollama`), or the adapter name for embedded defaults. */
  id: string;
  adapter: string;
  regions: string[];
  def: VendorDefinition;
  instance: VendorInstance;
  /**
   * Serves only callers who bring their own key (BYOK): an adapter the operator did not
   * configure, or configured without credentials. Never chosen for a call without a planner
   * that says so, and never counted as "available".
   */
  byokOnly?: boolean;
  /** Config with secret fields replaced, safe for logs, doctor and discovery. */
  redactedConfig: Record<string, unknown>;
  /** The values of its config's secret fields, scrubbed from any vendor text the router records. */
  secrets?: string[];
}

/** The configured vendor instances, in config order, and which capabilities each serves. */
export class VendorRegistry {
  private readonly list: RegisteredInstance[] = [];
  private readonly order = new Map<string, { targets: string[]; strategy: RouteStrategy }>();
  // Asked on every routed call: kept per capability until an instance or a route is added (boot).
  private readonly memo = new Map<string, RegisteredInstance[]>();
  private secretValues?: string[];

  /** Check what the adapter's create() returned, so a wrong plugin fails at boot, not at the first call. */
  add(inst: RegisteredInstance): void {
    const where = `vendor "${inst.id}" (${inst.adapter})`;
    const caps = (inst.instance as Partial<VendorInstance> | undefined)?.capabilities;
    if (!caps || typeof caps !== 'object')
      throw new ConfigError(`${where}: create() must return { capabilities: { "<capability>": { invoke, price } } }`);
    for (const [cap, impl] of Object.entries(caps)) {
      if (typeof impl?.invoke !== 'function' || typeof impl?.price !== 'function')
        throw new ConfigError(`${where}: capability "${cap}" needs invoke() and price() functions`);
      if (
        impl.models !== undefined
        && !(Array.isArray(impl.models) && impl.models.every((m) => typeof m === 'string'))
      ) {
        throw new ConfigError(`${where}: capability "${cap}" has models that are not a list of strings`);
      }
    }
    if (this.get(inst.id)) throw new ConfigError(`${where}: the instance id "${inst.id}" is used twice`);
    this.list.push(inst);
    this.forget();
  }

  /** Route order for a capability from the config's `routes:`. */
  setRoute(capability: string, targets: string[], strategy: RouteStrategy = 'fallback'): void {
    this.order.set(capability, { targets, strategy });
    this.forget();
  }

  private forget(): void {
    this.memo.clear();
    this.secretValues = undefined;
  }

  private memoized(key: string, make: () => RegisteredInstance[]): readonly RegisteredInstance[] {
    let list = this.memo.get(key);
    if (!list) this.memo.set(key, (list = make()));
    return list;
  }

  strategy(capability: string): RouteStrategy {
    return this.order.get(capability)?.strategy ?? 'fallback';
  }

  all(): readonly RegisteredInstance[] {
    return this.list;
  }

  /** Every configured secret value, of every instance: what no vendor's error text may carry on. */
  secrets(): readonly string[] {
    return (this.secretValues ??= this.list.flatMap((i) => i.secrets ?? []));
  }

  get(id: string): RegisteredInstance | undefined {
    return this.list.find((i) => i.id === id);
  }

  /**
   * Every instance serving a capability, in config order, whatever `routes` says: what a
   * `vendor` pin chooses from (a pin names one configured instance; routes order and limit
   * automatic routing only).
   */
  configured(capability: string): readonly RegisteredInstance[] {
    return this.memoized(`c:${capability}`, () => this.list.filter((i) => capability in i.instance.capabilities));
  }

  /** The instances automatic routing tries for a capability: its route's targets in order, else all. */
  serving(capability: string): readonly RegisteredInstance[] {
    return this.memoized(`s:${capability}`, () => {
      const serving = this.configured(capability);
      const route = this.order.get(capability)?.targets;
      if (!route) return [...serving];
      return route.map((id) => serving.find((s) => s.id === id)).filter((s): s is RegisteredInstance => !!s);
    });
  }

  async closeAll(): Promise<void> {
    for (const i of this.list) await i.instance.close?.();
  }
}
