import type { FlagEvaluator } from './flags.js';

// Services one area offers the others, which never import each other (the layer rules): the
// contract's type lives here in the core, the area that implements it provides it at build
// time, and an area that uses it looks it up when it needs it, so it works in whichever order
// areas register and answers plainly when the providing area is off.

/** Every service name and its contract. */
export interface ServiceTypes {
  /** Feature flags of an account, evaluated from memory (the observability area). */
  flags: FlagEvaluator;
}

export class Services {
  private readonly provided = new Map<keyof ServiceTypes, unknown>();

  provide<K extends keyof ServiceTypes>(name: K, impl: ServiceTypes[K]): void {
    if (this.provided.has(name)) throw new Error(`Service ${name} is provided twice.`);
    this.provided.set(name, impl);
  }

  /** The service, or undefined when no area provides it (its area is off). */
  get<K extends keyof ServiceTypes>(name: K): ServiceTypes[K] | undefined {
    return this.provided.get(name) as ServiceTypes[K] | undefined;
  }
}
