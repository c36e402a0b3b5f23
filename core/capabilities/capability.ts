import type { AreaPricedImpl, CapabilityImpl } from '../vendor-api.js';
import type { CapabilitySpec } from '../capability-spec.js';

// A capability's contract, shared by the area that calls it and every vendor that serves it:
// its name, whether a second vendor may be tried after the first may have acted, and its
// input and output types. Built-in and third-party code import the same descriptors
// (`svc-gateway/capabilities`), so an adapter is checked against the contract the area calls.

/**
 * A typed capability. `input`, `output` and `priced` are never set: they carry the types only.
 * `priced` is what `price()` is given after the call: the output, but for a stream the usage
 * its events added up to (the router settles a stream with that, not with the events).
 */
export interface Capability<N extends string = string, I = unknown, O = unknown, U = O> extends CapabilitySpec {
  readonly name: N;
  readonly input?: I;
  readonly output?: O;
  readonly priced?: U;
}

/** A capability's spec with its types, before it has a name (`capabilities()` gives it its key). */
export interface TypedSpec<I, O, U = O> extends CapabilitySpec {
  readonly input?: I;
  readonly output?: O;
  readonly priced?: U;
}

/**
 * `capability<Input, Output>({ idempotent, description })`: a spec that carries its types;
 * `capability<Input, Stream, Usage>` for a stream priced by its usage.
 */
export function capability<I, O, U = O>(spec: CapabilitySpec): TypedSpec<I, O, U> {
  return spec;
}

/** A spec the area prices (image, PDF): `areaPriced<Input, Output>({ idempotent, description })`. */
export interface AreaPricedSpec<I, O> extends TypedSpec<I, O, O> {
  readonly areaPriced: true;
}

/**
 * `areaPriced<Input, Output>({ idempotent, description })`: a spec whose every call the area
 * prices from its config (`router.price`); its vendors implement no `price()`.
 */
export function areaPriced<I, O>(spec: Omit<CapabilitySpec, 'areaPriced'>): AreaPricedSpec<I, O> {
  return { ...spec, areaPriced: true };
}

/**
 * A domain's capabilities keyed by name, each descriptor knowing its own name. The result is
 * what an area's `capabilities` field takes as it is.
 */
export function capabilities<T extends Record<string, TypedSpec<any, any, any>>>(
  specs: T
): {
  readonly [K in keyof T & string]: Capability<K, InputOf<T[K]>, OutputOf<T[K]>, PricedOf<T[K]>> &
    (T[K] extends { readonly areaPriced: true } ? { readonly areaPriced: true } : unknown);
} {
  const out: Record<string, Capability> = {};
  for (const [name, spec] of Object.entries(specs)) out[name] = { ...spec, name };
  return out as any;
}

export type InputOf<C> = C extends TypedSpec<infer I, any, any> ? I : never;
export type OutputOf<C> = C extends TypedSpec<any, infer O, any> ? O : never;
export type PricedOf<C> = C extends TypedSpec<any, any, infer U> ? U : never;

/**
 * What a vendor implements for a capability: `ImplOf<typeof AI_CAPABILITIES['ai.chat'], CandidatePlan>`;
 * without `price()` for a capability the area prices (`ImplOf<typeof IMAGE_CAPABILITIES['image.process']>`).
 */
export type ImplOf<C, P = unknown> = C extends { readonly areaPriced: true }
  ? AreaPricedImpl<InputOf<C>, OutputOf<C>, P>
  : CapabilityImpl<InputOf<C>, OutputOf<C>, P, PricedOf<C>>;
