import type { VendorDefinition } from '../core/define.js';
import sandboxPayments from './sandbox-payments/index.js';
import localStorage from './local-storage/index.js';
import s3 from './s3/index.js';
import minio from './minio/index.js';

/** Adapters that ship with the gateway, by the name `use:` gives them. */
export const builtinVendors: VendorDefinition<any>[] = [sandboxPayments, localStorage, s3, minio];
