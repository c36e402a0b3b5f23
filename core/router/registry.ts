import { ConfigError } from '../../config/load.js';
import { didYouMean } from '../../config/suggest.js';
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

  /**
   * `declared`: every capability an area declares (loaded areas and the built-in ones, on or
   * off), so an instance serving another name (a typo in a JavaScript adapter, which no type
   * check caught) stops the boot instead of never being called; each with its spec, which says
   * whether the area prices it (then an adapter has no price() of its own); structural, as the
   * spec's own file imports this one.
   */
  constructor(private readonly declared: ReadonlyMap<string, { areaPriced?: boolean }>) {}

  /** Check what the adapter's create() returned, so a wrong plugin fails at boot, not at the first call. */
  add(inst: RegisteredInstance): void {
    const where = `vendor "${inst.id}" (${inst.adapter})`;
    const caps = (inst.instance as Partial<VendorInstance> | undefined)?.capabilities;
    if (!caps || typeof caps !== 'object')
      throw new ConfigError(`${where}: create() must return { capabilities: { "<capability>": { invoke, price } } }`);
    for (const [cap, impl] of Object.entries(caps)) {
      const areaPriced = this.declared.get(cap)?.areaPriced === true;
      if (typeof impl?.invoke !== 'function')
        throw new ConfigError(`${where}: capability "${cap}" needs an invoke() function`);
      if (areaPriced && impl.price !== undefined)
        throw new ConfigError(`${where}: capability "${cap}" is priced by its area; its price() would never be asked`);
      if (!areaPriced && typeof impl.price !== 'function')
        throw new ConfigError(`${where}: capability "${cap}" needs invoke() and price() functions`);
      if (
        impl.models !== undefined
        && !(Array.isArray(impl.models) && impl.models.every((m) => typeof m === 'string'))
      ) {
        throw new ConfigError(`${where}: capability "${cap}" has models that are not a list of strings`);
      }
      const serves = inst.def.serves as Record<string, unknown> | undefined;
      if (serves && !Object.hasOwn(serves, cap)) {
        const named = Object.keys(serves);
        throw new ConfigError(
          `${where}: serves capability "${cap}", which its definition's serves does not name${didYouMean(cap, named)}`
        );
      }
      if (!this.declared.has(cap)) {
        throw new ConfigError(
          `${where}: serves capability "${cap}", which no area declares${didYouMean(cap, this.declared.keys())}`
        );
      }
    }
    if (this.get(inst.id)) throw new ConfigError(`${where}: the instance id "${inst.id}" is used twice`);
    this.list.push(inst);
    this.forget();
  }

  /**
   * Route order for a capability from the config's `routes:`, once every instance is added: a
   * target is a configured instance's id or an embedded engine's name (`sharp`), the latter
   * without configuring it again.
   */
  setRoute(capability: string, targets: string[], strategy: RouteStrategy = 'fallback'): void {
    const routable = this.list.filter((i) => !i.byokOnly).map((i) => i.id);
    for (const t of targets) {
      if (routable.includes(t)) continue;
      throw new ConfigError(
        `routes.${capability}.targets: "${t}" is not the id of a configured vendor instance or of an embedded `
          + `engine${didYouMean(t, routable)} (one of: ${routable.join(', ')})`
      );
    }
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

  /**
   * The instances automatic routing tries for a capability: its route's targets in order, else
   * all but stand-ins (VendorDefinition.standIn) when any other instance serves it.
   */
  serving(capability: string): readonly RegisteredInstance[] {
    return this.memoized(`s:${capability}`, () => {
      const serving = this.configured(capability);
      const route = this.order.get(capability)?.targets;
      if (!route) {
        const real = serving.filter((i) => !i.def.standIn);
        return real.some((i) => !i.byokOnly) ? real : [...serving];
      }
      return route.map((id) => serving.find((s) => s.id === id)).filter((s): s is RegisteredInstance => !!s);
    });
  }

  async closeAll(): Promise<void> {
    for (const i of this.list) await i.instance.close?.();
  }
}
