import type { Static, TSchema } from '@sinclair/typebox';
import type { AI_CAPABILITIES } from './capabilities/ai/capabilities.js';
import type { IMAGE_CAPABILITIES } from './capabilities/image.js';
import type { BILLING_CAPABILITIES, PAYMENTS_CAPABILITIES } from './capabilities/payments.js';
import type { PDF_CAPABILITIES } from './capabilities/pdf.js';
import type { SMS_CAPABILITIES } from './capabilities/sms.js';
import type { STORAGE_CAPABILITIES } from './capabilities/storage/objects.js';
import type { EMAIL_CAPABILITIES } from './capabilities/email.js';
import type { CAPTCHA_CAPABILITIES } from './capabilities/captcha.js';
import {
  PLUGIN_API_VERSION,
  type ImplsOf,
  type VendorContext,
  type VendorDefinition,
  type VendorInstance,
} from './vendor-api.js';

/** Every capability the built-in areas declare: what an adapter serves unless it names its `serves`. */
export type BuiltinCapabilities = typeof AI_CAPABILITIES &
  typeof STORAGE_CAPABILITIES &
  typeof PAYMENTS_CAPABILITIES &
  typeof BILLING_CAPABILITIES &
  typeof IMAGE_CAPABILITIES &
  typeof PDF_CAPABILITIES &
  typeof SMS_CAPABILITIES &
  typeof EMAIL_CAPABILITIES &
  typeof CAPTCHA_CAPABILITIES;

/**
 * The implementations `R` with every name outside the map `C` typed as a message naming it:
 * TypeScript checks no excess property of an object a function returns once one name fits, so
 * the check is this type's. Left as it is: a map with an index signature (an untyped
 * `VendorInstance`), and one with no such name, as an intersection with `{}` would lift the
 * weak-type check that refuses a map whose only name is misspelt (TS2353, naming it).
 */
export type ExactImpls<R, C> = string extends keyof R
  ? R
  : [Exclude<keyof R, keyof C>] extends [never]
    ? R
    : R & { [K in Exclude<keyof R, keyof C>]: `'${K & string}' is not a capability of the map this vendor serves` };

/** `create()`'s result, its `capabilities` exact against the map `C`. */
type ExactInstance<R, C> = Omit<VendorInstance<C>, 'capabilities'> & { capabilities: ExactImpls<R, C> };

/**
 * A vendor package's default export. Its `capabilities` are typed against the built-in areas'
 * descriptors, or against `serves` (a third-party area's): a misspelt name, even next to a
 * correct one, or a wrong signature does not compile. `NoInfer` keeps `create()`'s result
 * from widening the map; `R`, what it returns, is inferred to be checked name by name.
 */
export function defineVendor<S extends TSchema, C = BuiltinCapabilities, R extends ImplsOf<C> = ImplsOf<C>>(
  def: Omit<VendorDefinition<S, C>, 'kind' | 'apiVersion' | 'create'> & {
    create(config: Static<S>, ctx: VendorContext): ExactInstance<R, NoInfer<C>> | Promise<ExactInstance<R, NoInfer<C>>>;
  }
): VendorDefinition<S, C> {
  return { kind: 'vendor', apiVersion: PLUGIN_API_VERSION, ...def };
}
