// `svc-gateway/vendor`: everything a vendor adapter imports from the gateway, built-in or an npm
// package alike (the layer rules let vendors/ import core through this file alone). Its types
// reach no Fastify and no pino: an adapter gets plain inputs and a small Logger.

export { defineVendor, type BuiltinCapabilities } from '../define-vendor.js';
export {
  PLUGIN_API_VERSION,
  SECRET,
  secret,
  type VendorContext,
  type InvokeOptions,
  type CapabilityImpl,
  type VendorInstance,
  type VendorDefinition,
  type Logger,
  type LogFn,
  type ImplsOf,
  type AreaPricedImpl,
  type AnyImpl,
} from '../vendor-api.js';
export type { CapabilitySpec, ListPrice, AreaPrice } from '../capability-spec.js';
// The capability contracts (descriptors, inputs, outputs) and the pure helpers both sides need.
export * from '../capabilities/capability.js';
export * from '../capabilities/storage/objects.js';
export * from '../capabilities/storage/names.js';
export * from '../capabilities/storage/sigv4.js';
export * from '../capabilities/ai/chat.js';
export * from '../capabilities/ai/image.js';
export * from '../capabilities/ai/speech.js';
export * from '../capabilities/ai/realtime.js';
export * from '../capabilities/ai/batch.js';
export * from '../capabilities/ai/price.js';
export * from '../capabilities/ai/capabilities.js';
export * from '../capabilities/ai/models.js';
export * from '../capabilities/payments.js';
export * from '../capabilities/image.js';
export * from '../capabilities/pdf.js';
export * from '../capabilities/sms.js';
export * from '../capabilities/sms-segments.js';
export * from '../capabilities/email.js';
export * from '../capabilities/email-mime.js';
export * from '../capabilities/video.js';
export * from '../capabilities/image-sniff.js';
export * from '../capabilities/captcha.js';
export * from '../capabilities/captcha-altcha.js';
// Failure kinds and the helpers that map an HTTP answer to one.
export * from '../router/failure.js';
// Calling a vendor's HTTP API: fetch with failure mapping, a pooled keep-alive client, SSE, the
// health probe.
export * from '../vendor-http/http.js';
export * from '../vendor-http/download.js';
export * from '../vendor-http/bearer-api.js';
export * from '../vendor-http/pooled-http.js';
export * from '../vendor-http/sse.js';
export * from '../vendor-http/health-probe.js';
export * from '../vendor-http/siteverify.js';
// Node http(s) Agents for SDKs that take one: every connection a CONNECT through the egress proxy.
export * from '../egress/proxy-agents.js';
export * from '../errors.js';
export * from '../ids.js';
export * from '../clock.js';
export * from '../http/pagination.js';
export * from '../data-dir.js';
export * from '../executable.js';
export * from '../sqlite/checkpointer.js';
// CPU-heavy work off the event loop: queues fair per account, worker threads a deadline can end.
export * from '../isolation/fair-queue.js';
export * from '../isolation/background-priority.js';
export * from '../isolation/worker-pool.js';
export * from '../isolation/task-errors.js';
export * from '../isolation/task-module.js';
