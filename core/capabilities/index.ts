// `svc-gateway/capabilities`: the contracts areas call and vendors implement, with the pure
// helpers both sides need, and the plugin API of `svc-gateway/define`. A third-party adapter
// imports from here exactly what a built-in one imports from core/.

export * from '../define.js';
export * from './capability.js';
export * from './storage/objects.js';
export * from './storage/names.js';
export * from './storage/sigv4.js';
export * from './ai/chat.js';
export * from './ai/image.js';
export * from './ai/speech.js';
export * from './ai/realtime.js';
export * from './ai/batch.js';
export * from './ai/price.js';
export * from './ai/capabilities.js';
export * from './ai/models.js';
export * from './payments.js';
export * from './image.js';
export type { CallOptions, StreamOptions, CallResult } from '../router/router.js';
export type { Attempt } from '../router/attempt.js';
export type { StreamSession } from '../router/stream.js';
export type { Planner, PlannerOptions, PlanRequest, RouteCandidate, Planned, Routed } from '../router/planner.js';
export * from './pdf.js';
export * from './sms.js';
export * from './sms-segments.js';
export * from './email.js';
export * from './captcha.js';
export * from './captcha-altcha.js';
export * from './video.js';
