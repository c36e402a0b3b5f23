import type { CapabilityImpl } from '../vendor-api.js';
import type { CapabilitySpec } from '../capability-spec.js';

// A capability's contract, shared by the area that calls it and every vendor that serves it:
// its name, whether a second vendor may be tried after the first may have acted, and its
// input and output types. Built-in and third-party code import the same descriptors
// (`svc-gateway/capabilities`), so an adapter is checked against the contract the area calls.

/** A typed capability. `input` and `output` are never set: they carry the types only. */
export interface Capability<N extends string = string, I = unknown, O = unknown> extends CapabilitySpec {
  readonly name: N;
  readonly input?: I;
  readonly output?: O;
}

/** A capability's spec with its types, before it has a name (`capabilities()` gives it its key). */
export interface TypedSpec<I, O> extends CapabilitySpec {
  readonly input?: I;
  readonly output?: O;
}

/** `capability<Input, Output>({ idempotent, description })`: a spec that carries its types. */
export function capability<I, O>(spec: CapabilitySpec): TypedSpec<I, O> {
  return spec;
}

/**
 * A domain's capabilities keyed by name, each descriptor knowing its own name. The result is
 * what an area's `capabilities` field takes as it is.
 */
export function capabilities<T extends Record<string, TypedSpec<any, any>>>(
  specs: T
): {
  readonly [K in keyof T & string]: Capability<K, InputOf<T[K]>, OutputOf<T[K]>>;
} {
  const out: Record<string, Capability> = {};
  for (const [name, spec] of Object.entries(specs)) out[name] = { ...spec, name };
  return out as any;
}

export type InputOf<C> = C extends TypedSpec<infer I, any> ? I : never;
export type OutputOf<C> = C extends TypedSpec<any, infer O> ? O : never;

/** What a vendor implements for a capability: `ImplOf<typeof AI_CAPABILITIES['ai.chat'], CandidatePlan>`. */
export type ImplOf<C, P = unknown> = CapabilityImpl<InputOf<C>, OutputOf<C>, P>;
