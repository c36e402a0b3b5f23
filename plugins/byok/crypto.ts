import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** The BYOK data key: HKDF-SHA256 of the master key, so it is never the key that signs tokens. */
export function byokKey(master: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.from('svc-gateway byok salt v1'), Buffer.from('byok credentials v1'), 32));
}

/**
 * AES-256-GCM with a fresh 96-bit nonce; the record id and account are the associated data,
 * so a ciphertext copied onto another row does not decrypt. Stored as `v1.<nonce>.<tag>.<ct>`.
 */
export function seal(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

export function open(key: Buffer, sealed: string, aad: string): string {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unknown BYOK ciphertext format');
  const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  d.setAAD(Buffer.from(aad));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
}
