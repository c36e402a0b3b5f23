import type { TSchema } from '@sinclair/typebox';
import type { AreaDefinition } from './context.js';
import { PLUGIN_API_VERSION } from './vendor-api.js';

// The public plugin API. Built-in areas and vendors use exactly what a third-party npm
// package uses: default-export the result of defineArea() or defineVendor().

export function defineArea<S extends TSchema>(def: Omit<AreaDefinition<S>, 'kind' | 'apiVersion'>): AreaDefinition<S> {
  return { kind: 'area', apiVersion: PLUGIN_API_VERSION, ...def };
}

export { VendorFailure, type FailureKind } from './router/failure.js';
export { SECRET, secret, PLUGIN_API_VERSION } from './vendor-api.js';
export { defineVendor, type BuiltinCapabilities } from './define-vendor.js';
export type {
  VendorContext,
  InvokeOptions,
  CapabilityImpl,
  VendorInstance,
  VendorDefinition,
  Logger,
  LogFn,
  ImplsOf,
  AreaPricedImpl,
  AnyImpl,
} from './vendor-api.js';
export type { CapabilitySpec, ListPrice, AreaPrice } from './capability-spec.js';
export type { AreaContext, AreaDefinition } from './context.js';
