import type { ByokUse } from './credentials.js';
import type { RegisteredInstance } from './registry.js';

/** What the router gives an area's planner: the call and the instances that may serve it. */
export interface PlanRequest<Q = unknown> {
  capability: string;
  accountId: string;
  /**
   * The account's region (`auto`: anywhere); the candidates already serve it. A planner keeps
   * only what serves it (`inRegion`), and the router refuses a pin it would serve elsewhere.
   */
  region?: string;
  /** The `vendor` pin, already applied to the candidates. */
  vendor?: string;
  model?: string;
  /** The area's own planning input (the AI area: task, prefer, needs). */
  request: Q;
}

/** An instance the router offers a planner, with the caller's credentials for it when it has some. */
export interface RouteCandidate {
  instance: RegisteredInstance;
  byok?: ByokUse;
}

/** One candidate as a planner returns it: which instance, and its plan (handed to it alone). */
export interface Planned<P = unknown> {
  id: string;
  plan?: P;
}

/** A planned candidate as the router returns it: the planner's own fields, and its BYOK use. */
export type Routed<C extends Planned = Planned> = C & { byok?: ByokUse };

/**
 * An area's planner for a capability: orders the candidates (dropping those that cannot serve
 * the request) and gives each its plan. An empty list is the router's 503 no_vendor_available.
 */
export type Planner<Q = any, C extends Planned = Planned> = (req: PlanRequest<Q>, candidates: RouteCandidate[]) => C[];

export interface PlannerOptions {
  /** Where the area documents its vendors, named by no_vendor_available (docs/configuration.md by default). */
  docs?: string;
  /** A local engine's install advice, named by no_vendor_available (NoVendorFor.hint). */
  hint?: string;
}
