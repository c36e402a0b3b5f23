// The package's programmatic entry: embed the gateway, or write a plugin.
export { buildApp, type BuildOptions } from './app.js';
export { loadConfig, ConfigError } from '../config/load.js';
export { defineArea, defineVendor, secret, VendorFailure, PLUGIN_API_VERSION } from './define.js';
export type {
  AreaDefinition,
  VendorDefinition,
  VendorContext,
  VendorInstance,
  CapabilityImpl,
  InvokeOptions,
  FailureKind,
} from './define.js';
export { apiError, ApiError, ERRORS, type ErrorCode } from './errors.js';
// The router as an area sees it: calls and streams, planner hooks, the credentials provider.
export type { CallOptions, StreamOptions, CallResult, Meter, Router } from './router/router.js';
export type { Attempt } from './router/attempt.js';
export type { StreamSession } from './router/stream.js';
export type { Planner, PlannerOptions, PlanRequest, RouteCandidate, Planned, Routed } from './router/planner.js';
export type { CredentialsProvider, Credentials, ByokUse } from './router/credentials.js';
