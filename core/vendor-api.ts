import type { Static, TSchema } from '@sinclair/typebox';
import type { FailureKind } from './router/failure.js';
import type { ModelEntry, Preset } from './capabilities/ai/models.js';

// The vendor half of the plugin API (svc-gateway/define re-exports it): what an adapter
// implements and what it is given. A leaf below the router, so core imports it without
// going through define.ts, which sits above the areas' context.

/** One level of {@link Logger}: pino's call shapes, so the gateway's pino logger is one. */
export interface LogFn {
  (obj: object, msg?: string): void;
  (msg: string): void;
}

/**
 * The logger a vendor is given: the gateway passes its pino child, but a vendor's types name
 * only this, so a third-party package type-checks without pino's (or Fastify's) types.
 */
export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}

/** What a vendor adapter may use: no Fastify, no wallet, no database. */
export interface VendorContext {
  instanceId: string;
  /**
   * The core's outbound HTTP client (undici's fetch) under the egress rules: the hosts of the URLs
   * in this instance's own config are reached whatever `egress` says (the operator named them),
   * any other host (a redirect, a URL in an answer) only as `egress` allows; the metadata service
   * never (core/egress/vendor-agent.ts).
   */
  fetch: typeof globalThis.fetch;
  /** The same rules as an undici Agent, for `request` (PooledHttp); optional for tests that make an adapter. */
  agent?: () => Promise<import('undici').Agent>;
  /** The same rules as node:http(s) Agents, for an SDK that takes those (the AWS SDK, minio); optional as `agent`. */
  nodeAgents?: () => { httpAgent: import('node:http').Agent; httpsAgent: import('node:https').Agent };
  publicUrl: string;
  dataDir: string;
  /**
   * The gateway's forward proxy (http://127.0.0.1:PORT, started on first call), which holds
   * every connection to the egress rules: for an engine that runs a caller's page (a browser)
   * and so opens connections the gateway does not make itself.
   */
  egressProxy: () => Promise<string>;
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
  /**
   * The caller's own credentials for this instance (BYOK), when the call runs on them: decrypted
   * for this call only, never another instance's (an AI plan carries them too).
   */
  credentials?: Record<string, string>;
  /**
   * The caller's key for this one effect (an outbox record's id), the same on every attempt
   * and every resend: an adapter whose API takes an idempotency key passes it on (a header, a
   * message id) and declares `idempotencyKeys: true` on the capability.
   */
  idempotencyKey?: string;
}

export interface CapabilityImpl<I = any, O = any, P = unknown, U = O> {
  invoke(input: I, opts: InvokeOptions<P>): Promise<O>;
  /**
   * Vendor cost in micro-USD. Called without output before the call (the estimate that is
   * reserved: must be an upper bound) and with the output after it (what is settled; for a
   * stream, the usage its events added up to), with the instance's own plan either way.
   */
  price(input: I, output?: U, plan?: P): number;
  /** Models this instance serves for the capability; empty means any. */
  models?: string[];
  /**
   * The vendor's API de-duplicates by the `idempotencyKey` it is handed: a second request with
   * the same key does not act again. The outbox (core/outbox) resends a send whose outcome a
   * crash lost only to such a vendor; to any other it marks the record failed (outcome unknown).
   */
  idempotencyKeys?: boolean;
}

/**
 * A capability the area prices (its descriptor says `areaPriced`: image, PDF): the vendor only
 * does the work, and has no `price()` (the router asks the area).
 */
export type AreaPricedImpl<I = any, O = any, P = unknown> = Omit<CapabilityImpl<I, O, P>, 'price'> & { price?: never };

/** An implementation as the router sees it: `price()` is there unless the area prices the capability. */
export type AnyImpl = Omit<CapabilityImpl, 'price'> & { price?: CapabilityImpl['price'] };

/**
 * Implementations typed against a map of capability descriptors (`capabilities()`'s result):
 * only its names, each with its own input, output and priced types, and `price()` required or
 * forbidden as the descriptor is vendor- or area-priced. Structural, so this leaf does not
 * import the descriptors; `any` (the default) leaves a map untyped, as the router sees it.
 */
export type ImplsOf<C> = {
  [K in keyof C]?: C[K] extends { readonly input?: infer I; readonly output?: infer O; readonly priced?: infer U }
    ? C[K] extends { readonly areaPriced: true }
      ? AreaPricedImpl<I, O, any>
      : CapabilityImpl<I, O, any, U>
    : never;
};

export interface VendorInstance<C = any> {
  capabilities: ImplsOf<C>;
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

export interface VendorDefinition<S extends TSchema = TSchema, C = any> {
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
  /**
   * A stand-in (the email and SMS capture sinks): automatic routing takes it only while no other
   * instance serves the capability, so a send a real vendor refused never lands in it; a `vendor`
   * pin or the operator's `routes` still reach it.
   */
  standIn?: boolean;
  /**
   * The descriptor maps whose capabilities this adapter serves, for the type check only
   * (`defineVendor` takes the built-in ones when it is left out): a third-party area's map,
   * exported by its package, types the adapter's `capabilities` against that area.
   */
  serves?: C;
  create(config: Static<S>, ctx: VendorContext): VendorInstance<C> | Promise<VendorInstance<C>>;
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

/** Bumped when the plugin API changes incompatibly; the loader refuses other versions. */
export const PLUGIN_API_VERSION = 1;
