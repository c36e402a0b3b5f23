// `svc-gateway/area`: everything an area imports from the gateway, built-in or an npm package
// alike (the layer rules let plugins/ import core through this file alone): the vendor kit's
// contracts and helpers, plus the services an area is handed in its context and the HTTP
// pieces its routes share with the core's.
// The gateway registers @fastify/swagger, whose types add `summary`, `tags`… to a route's schema:
// referenced here so an area package compiled against this kit alone may write them too.
/// <reference types="@fastify/swagger" preserve="true" />

export * from './vendor.js';
export { defineArea } from '../define.js';
export type * from '../context.js';
// The router as an area sees it: calls and streams, planner hooks, the credentials provider.
export type { CallOptions, StreamOptions, CallResult, Meter, Router } from '../router/router.js';
export type { Attempt } from '../router/attempt.js';
export type { StreamSession } from '../router/stream.js';
export type * from '../router/planner.js';
export { inRegion } from '../router/candidates.js';
export type { CredentialsProvider, Credentials, ByokUse } from '../router/credentials.js';
export type { RegisteredInstance, VendorRegistry, RouteStrategy } from '../router/registry.js';
// Money, holds and usage.
export * from '../wallet/money.js';
export type * from '../wallet/wallet.js';
export { DAY_MS, usageCapability } from '../wallet/usage-rollup.js';
export * from '../wallet/marked-charge.js';
// Jobs, results, events, outbound fetches of caller URLs.
export * from '../jobs/engine.js';
export * from '../results/result-store.js';
export type { Bus } from '../bus/bus.js';
export type * from '../services/services.js';
export type * from '../services/flags.js';
export type * from '../egress/egress.js';
// Storage an area keeps: migrations, newest-first pages, sealed secrets.
export type { DialectName } from '../db/open.js';
export { migrateModule } from '../db/migrate.js';
export * from '../db/newest-first.js';
export * from '../auth/sealed.js';
// The HTTP layer's shared pieces: idempotent routes, `{ ok }`, errors, CORS, content types, keys.
export * from '../http/idempotency.js';
export { idempotentTransaction } from '../http/idempotent-transaction.js';
export { recordAttempt } from '../http/idempotent-attempt.js';
export { sendContinue } from '../http/expect-continue.js';
export { readVendorCallback } from '../http/vendor-callback.js';
export { hostName } from '../http/sockets.js';
export type { Sockets, UpgradeRoute, HostClaim, UpgradeHandler, RawRequestHandler } from '../http/sockets.js';
export * from '../http/ok.js';
export { toApiError } from '../http/error-handler.js';
export { wildcardPattern } from '../http/cors.js';
export * from '../http/public-cors.js';
export * from '../http/content-type.js';
export { presentedKey } from '../http/auth-hook.js';
export { RateLimiter } from '../http/rate-limit.js';
export type { KeyRow } from '../auth/keys.js';
export type { Principal } from '../auth/principal.js';
export { requireLiveKey, requireWithin } from '../auth/key-grants.js';
// Redacting a caller's secrets from what a vendor echoed back.
export { credentialValues, scrubText } from '../router/scrub.js';
// Gateway events and the durable outbox (email, SMS): svc.events, svc.outbox.
export type { Events, EventInput, GatewayEvent, EventSink } from '../events/events.js';
export type { Outbox } from '../outbox/outbox.js';
export { NOT_SENT_KINDS } from '../outbox/outbox.js';
export type * from '../outbox/types.js';
