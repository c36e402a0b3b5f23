import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

// Secrets at rest (BYOK credentials, stored idempotent responses that carry a key's secret):
// AES-256-GCM under a key derived from the master key for one purpose, with associated data
// binding a ciphertext to its row. Stored as `v1.<nonce>.<tag>.<ciphertext>`.

/** A 32-byte key for one purpose: HKDF-SHA256 of the master key, never the master key itself. */
export function deriveKey(master: Buffer, salt: string, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.from(salt), Buffer.from(info), 32));
}

export function seal(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

export function open(key: Buffer, sealed: string, aad: string): string {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unknown ciphertext format');
  const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  d.setAAD(Buffer.from(aad));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
}
