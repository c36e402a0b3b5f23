import { deriveKey } from '../../core/kit/area.js';

export { seal, open } from '../../core/kit/area.js';

/** The BYOK data key: HKDF-SHA256 of the master key, so it is never the key that signs tokens. */
export function byokKey(master: Buffer): Buffer {
  return deriveKey(master, 'svc-gateway byok salt v1', 'byok credentials v1');
}
