import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { CoreConfig } from '../config/schema.js';
import type { DialectName } from './db/open.js';
import type { KeyStore, Principal } from './auth/keys.js';
import type { TokenSigner } from './auth/tokens.js';
import type { Wallet } from './wallet/wallet.js';
import type { Router, Meter } from './router/router.js';
import type { ResultStore } from './results/result-store.js';
import type { VendorRegistry } from './router/registry.js';
import type { RateDecision } from './http/rate-limit.js';
import type { TierConfig } from '../config/schema.js';
import type { Bus } from './bus/bus.js';
import type { CapabilitySpec } from './capability-spec.js';
import type { FastifyInstance } from 'fastify';
import type { Migration } from 'kysely';
import type { Static, TSchema } from '@sinclair/typebox';
import type { ErrorCode } from './errors.js';
import type { Egress } from './egress/egress.js';
import type { JobsEngine } from './jobs/engine.js';
import type { Retention } from './retention/retention.js';
import type { Events } from './events/events.js';
import type { Outbox } from './outbox/outbox.js';
import type { Sockets } from './http/sockets.js';
import type { Services } from './services/services.js';

export interface LoadedArea {
  def: AreaDefinition;
  config: Record<string, unknown>;
  /** Built-in, or the npm package it came from. */
  source: 'builtin' | string;
}

/** Everything a request handler or an area service may reach, decorated as `app.svc`. */
export interface Svc {
  config: CoreConfig;
  db: Kysely<any>;
  dialect: DialectName;
  log: Logger;
  keys: KeyStore;
  tokens: TokenSigner;
  /** Read once at start; areas derive their own keys from it (core/auth/sealed.ts deriveKey). Never logged. */
  masterKey: Buffer;
  /** Key that seals stored idempotent responses (they may carry a new key's secret). */
  idempotencyKey: Buffer;
  wallet: Wallet;
  router: Router;
  /** Saves bytes areas hand back as `*_url` fields: signed URLs, retention (core/results). */
  results: ResultStore;
  vendors: VendorRegistry;
  /** Token buckets per key: in memory on one node, in Redis when redis.url is set. */
  rateLimits: {
    take(id: string, tier: Pick<TierConfig, 'rate_per_minute' | 'burst'>): RateDecision | Promise<RateDecision>;
  };
  bus: Bus;
  /** The guarded fetcher for every URL a caller hands the gateway. */
  egress: Egress;
  /** Durable jobs: areas register handlers at build time; started when the app is ready. */
  jobs: JobsEngine;
  /** Removes old rows of growing tables on a recurring job; areas add their tables at build time. */
  retention: Retention;
  /** Gateway events (`email.delivered`…): areas declare and emit, in their own transaction. */
  events: Events;
  /** Durable sends (email, SMS): an area registers its kind of record at build time. */
  outbox: Outbox;
  /** WebSocket upgrades and Hosts an area serves on the gateway's port, outside Fastify's router. */
  sockets: Sockets;
  /** Services one area provides the others (core/services): areas never import each other. */
  services: Services;
  areas: LoadedArea[];
  capabilities: Map<string, CapabilitySpec>;
  version: string;
  startedAt: number;
}

export type AuthMode = 'key' | 'none' | 'admin';

declare module 'fastify' {
  interface FastifyInstance {
    svc: Svc;
  }
  interface FastifyRequest {
    principal?: Principal;
    meter: Meter;
    /** The idempotency claim this request holds (core/http/idempotency.ts); `owner` fences its writes. */
    idem?: { accountId: string; endpoint: string; key: string; owner: string; leaseUntil: number };
  }
  interface FastifyContextConfig {
    /** Who may call: a project key (default under /v1), nobody in particular, or the operator. */
    auth?: AuthMode;
    /** Scope a key needs (`account`, `storage:read`). */
    scope?: string;
    /**
     * With `auth: 'key'`: the route also admits an area's public (browser) key, any presented
     * key that is not a project key; the area maps it to a principal (its account, tier and
     * the narrow scopes it grants, a rate bucket of its own as `keyId`), or null when unknown.
     */
    publicKey?: (key: string) => Principal | null | Promise<Principal | null>;
    /**
     * The route authenticates in its handler, and sends `100 Continue` there once it has
     * (core/http/expect-continue.ts); other routes send it after their onRequest auth hook.
     */
    continueInHandler?: boolean;
    /** Honour idempotency keys (body `idempotency_key` or the `idempotency-key` header). */
    idempotent?: boolean;
    /**
     * For an idempotent route whose answer is not always a JSON reply (a stream): answer a
     * replay from the stored body itself and return true (the reply is then the route's), or
     * return false to have the stored body sent as JSON. Such a route stores its own answer
     * with keepIdempotentResponse (core/http/idempotency.ts).
     */
    replayIdempotent?: (
      req: import('fastify').FastifyRequest,
      reply: import('fastify').FastifyReply,
      stored: { status: number; body: string }
    ) => boolean;
    /**
     * For an idempotent route that takes part of its request outside `req.body` (an uploaded
     * file): a digest of that part, hashed with the body so another file under the same key
     * is 409. Called only when the request carries a key.
     */
    idempotencyExtra?: (req: import('fastify').FastifyRequest) => string | undefined;
    /** Discovery id of this operation (`account.topup`). */
    operation?: string;
    /** Vendor capability the operation needs, for discovery's `available`. */
    capability?: string;
    /** Billing line for discovery. */
    billing?: { unit: string; price_usd: number; free_quota?: number };
    /** Error codes beyond those the core derives from the route, for discovery and OpenAPI. */
    errors?: ErrorCode[];
  }
}

// The area half of the plugin API (svc-gateway/define re-exports it). It lives beside Svc, which
// an area is given and which holds the loaded areas: the two refer to each other.

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
