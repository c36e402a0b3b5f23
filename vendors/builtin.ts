import type { VendorDefinition } from '../core/define.js';
import sandboxPayments from './sandbox-payments/index.js';

/** Adapters that ship with the gateway, by the name `use:` gives them. */
export const builtinVendors: VendorDefinition<any>[] = [sandboxPayments];
