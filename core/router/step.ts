import type { ByokUse } from './credentials.js';
import type { RegisteredInstance } from './registry.js';

/** One candidate of a call, in the order it is tried: its instance, its own plan, its BYOK use. */
export interface Step {
  cand: RegisteredInstance;
  plan?: unknown;
  byok?: ByokUse;
}
