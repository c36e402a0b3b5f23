import type { FastifyInstance } from 'fastify';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Migration } from 'kysely';
import type { Logger } from 'pino';
import type { Svc } from './context.js';
import type { FailureKind } from './router/failure.js';
import type { RegisteredInstance } from './router/registry.js';
import type { ModelEntry, Preset } from './capabilities/ai/models.js';

// The public plugin API. Built-in areas and vendors use exactly what a third-party npm
// package uses: default-export the result of defineArea() or defineVendor().

export const PLUGIN_API_VERSION = 1;

export interface CapabilitySpec {
  /** Safe to send to a second vendor after the first may have acted (chat yes, email no). */
  idempotent: boolean;
  description?: string;
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

export interface AreaContext<C = Record<string, unknown>> {
  svc: Svc;
  config: C;
  log: Logger;
}

export interface AreaDefinition<S extends TSchema = TSchema> {
  kind: 'area';
  apiVersion: number;
  /** Area name, the key under `plugins:` in the config. */
  name: string;
  configSchema?: S;
  /** Ordered by key; applied once each, recorded in the area's own migration table. */
  migrations?: Record<string, Migration>;
  /** Vendor capabilities this area calls, with whether failover may resend them. */
  capabilities?: Record<string, CapabilitySpec>;
  /** Registers the area's routes. Runs inside its own Fastify plugin scope. */
  register(app: FastifyInstance, ctx: AreaContext<Static<S>>): Promise<void> | void;
  /** Background work to start once every area is registered (jobs, timers). */
  start?(ctx: AreaContext<Static<S>>): Promise<void> | void;
  stop?(): Promise<void> | void;
}

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
  health?(opts: { signal: AbortSignal; credentials?: Record<string, string> }): Promise<{ ok: boolean; error?: string }>;
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

export function defineArea<S extends TSchema>(def: Omit<AreaDefinition<S>, 'kind' | 'apiVersion'>): AreaDefinition<S> {
  return { kind: 'area', apiVersion: PLUGIN_API_VERSION, ...def };
}

export function defineVendor<S extends TSchema>(def: Omit<VendorDefinition<S>, 'kind' | 'apiVersion'>): VendorDefinition<S> {
  return { kind: 'vendor', apiVersion: PLUGIN_API_VERSION, ...def };
}

/** Schema annotation for secret config fields (redacted from logs, never returned). */
export const SECRET = 'x-secret';
export function secret<T extends TSchema>(schema: T): T {
  return { ...schema, [SECRET]: true } as T;
}

export { VendorFailure, type FailureKind } from './router/failure.js';
