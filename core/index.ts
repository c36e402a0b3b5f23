// The package's programmatic entry: embed the gateway, or write a plugin.
export { buildApp, type BuildOptions } from './app.js';
export { loadConfig, ConfigError } from '../config/load.js';
export { defineArea, defineVendor, secret, VendorFailure, PLUGIN_API_VERSION } from './define.js';
export type { AreaDefinition, VendorDefinition, VendorContext, VendorInstance, CapabilityImpl, InvokeOptions, FailureKind } from './define.js';
export { apiError, ApiError, ERRORS, type ErrorCode } from './errors.js';
