import pino from 'pino';
import type { VendorContext } from '../../core/define.js';

/** What the app gives an adapter, for tests that create one directly: global fetch, silent log. */
export function vendorContext(instanceId: string): VendorContext {
  return { instanceId, fetch, publicUrl: 'http://127.0.0.1', dataDir: '/tmp', log: pino({ level: 'silent' }) };
}
