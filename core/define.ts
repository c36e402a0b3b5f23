import type { TSchema } from '@sinclair/typebox';
import type { AreaDefinition } from './context.js';
import type { VendorDefinition } from './vendor-api.js';

// The public plugin API. Built-in areas and vendors use exactly what a third-party npm
// package uses: default-export the result of defineArea() or defineVendor().

export const PLUGIN_API_VERSION = 1;

export function defineArea<S extends TSchema>(def: Omit<AreaDefinition<S>, 'kind' | 'apiVersion'>): AreaDefinition<S> {
  return { kind: 'area', apiVersion: PLUGIN_API_VERSION, ...def };
}

export function defineVendor<S extends TSchema>(
  def: Omit<VendorDefinition<S>, 'kind' | 'apiVersion'>
): VendorDefinition<S> {
  return { kind: 'vendor', apiVersion: PLUGIN_API_VERSION, ...def };
}

export { VendorFailure, type FailureKind } from './router/failure.js';
export { SECRET, secret } from './vendor-api.js';
export type { VendorContext, InvokeOptions, CapabilityImpl, VendorInstance, VendorDefinition } from './vendor-api.js';
export type { CapabilitySpec, ListPrice } from './capability-spec.js';
export type { AreaContext, AreaDefinition } from './context.js';
