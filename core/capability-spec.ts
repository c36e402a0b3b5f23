import type { RegisteredInstance } from './router/registry.js';

// What an area declares of each capability it calls: the router's and discovery's view.

export interface CapabilitySpec {
  /** Safe to send to a second vendor after the first may have acted (chat yes, email no). */
  idempotent: boolean;
  description?: string;
  /**
   * The area sets every call's price from its config, whichever vendor serves it (image, PDF):
   * the router asks the area's price (`router.price`), and a vendor implements no `price()`.
   */
  areaPriced?: boolean;
  /**
   * For an area that prices its vendors' calls (the AI catalog): what one unit costs on this
   * instance, in micro-USD before the markup; null when it is free. Discovery shows the lowest
   * among the instances that serve the operator's callers, with the markup.
   */
  listPrice?(instance: RegisteredInstance): ListPrice | null;
}

/** A list price: `micros` micro-USD per `unit` (`1m_input_tokens`, `image`, `minute`…). */
export interface ListPrice {
  unit: string;
  micros: number;
}

/**
 * An area's price for a capability it prices, in micro-USD before the markup: without the
 * output, the upper bound the router reserves before the call; with it, what is settled (it may
 * depend on the output, e.g. its pages).
 */
export type AreaPrice<I = any, O = any> = (input: I, output?: O) => number;
