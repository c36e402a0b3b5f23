import type { Static, TSchema } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { FailureKind } from './router/failure.js';
import type { ModelEntry, Preset } from './capabilities/ai/models.js';

// The vendor half of the plugin API (svc-gateway/define re-exports it): what an adapter
// implements and what it is given. A leaf below the router, so core imports it without
// going through define.ts, which sits above the areas' context.

/** What a vendor adapter may use: no Fastify, no wallet, no database. */
export interface VendorContext {
  instanceId: string;
  /** The core's outbound HTTP client (undici); vendor APIs are operator-configured, so not SSRF-guarded. */
  fetch: typeof globalThis.fetch;
  publicUrl: string;
  dataDir: string;
  log: Logger;
}

export interface InvokeOptions<P = unknown> {
  signal: AbortSignal;
  /** The account the call is for (an opaque id: adapters never read the database). */
  accountId?: string;
  /** Deadline in ms since epoch, for adapters that pass a timeout on to their API. */
  deadline: number;
  /**
   * This instance's own plan from the area's planner (model, prices, the caller's key for it):
   * never another candidate's, so a caller's credentials reach only the instance they are for.
   */
  plan?: P;
}

export interface CapabilityImpl<I = any, O = any, P = unknown> {
  invoke(input: I, opts: InvokeOptions<P>): Promise<O>;
  /**
   * Vendor cost in micro-USD. Called without output before the call (the estimate that is
   * reserved: must be an upper bound) and with the output after it (what is settled), with
   * the instance's own plan either way.
   */
  price(input: I, output?: O, plan?: P): number;
  /** Models this instance serves for the capability; empty means any. */
  models?: string[];
}

export interface VendorInstance {
  capabilities: Record<string, CapabilityImpl>;
  /**
   * Regions this instance serves when its config names none, where that depends on the
   * config (an openai-compatible preset's server); else the definition's `regions` apply.
   */
  regions?: string[];
  /** Cheapest authenticated check; used by `doctor`, /readyz details and BYOK tests. */
  health?(opts: {
    signal: AbortSignal;
    credentials?: Record<string, string>;
  }): Promise<{ ok: boolean; error?: string }>;
  /** Map an adapter-specific error to a failure kind; the router has a generic fallback. */
  classify?(err: unknown): FailureKind | undefined;
  close?(): Promise<void> | void;
}

export interface VendorDefinition<S extends TSchema = TSchema> {
  kind: 'vendor';
  apiVersion: number;
  /** Adapter name, what `use:` names in the config. */
  name: string;
  /** Mark secret fields with `secret()` so they are redacted from logs and never returned. */
  configSchema: S;
  /** Regions the adapter serves (`western`, `china`, `global`…); `global` serves all. */
  regions?: string[];
  /** Configured with no `vendors:` entry, as an embedded default (local-storage, outbox…). */
  embedded?: boolean;
  create(config: Static<S>, ctx: VendorContext): VendorInstance | Promise<VendorInstance>;
  /** Bring-your-own-key: the provider id callers register under, and the credential fields it takes. */
  byok?: { provider: string; credentials: TSchema };
  /**
   * AI adapters: the catalog rows of the models it serves (prices, limits, regions), `vendor`
   * being this adapter's name. The AI area's catalog is assembled from the adapters in use.
   */
  models?: ModelEntry[];
  /** Known servers a `preset` config key names, each with its own rows (openai-compatible). */
  presets?: Record<string, Preset>;
}

/** Schema annotation for secret config fields (redacted from logs, never returned). */
export const SECRET = 'x-secret';
export function secret<T extends TSchema>(schema: T): T {
  return { ...schema, [SECRET]: true } as T;
}
