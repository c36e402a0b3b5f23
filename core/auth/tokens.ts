import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { apiError } from '../errors.js';

/**
 * Signed, short-lived tokens (realtime client tokens, AI session tokens, checkout links):
 * `svt1.<base64url JSON>.<base64url HMAC-SHA256>`, checked without a database read.
 * Each purpose gets its own key derived from the master key, so a token minted for one
 * purpose is never accepted for another.
 */
export const TOKEN_PREFIX = 'svt1';

export class TokenSigner {
  private readonly keys = new Map<string, Buffer>();
  constructor(private readonly masterKey: Buffer) {}

  private key(purpose: string): Buffer {
    let k = this.keys.get(purpose);
    if (!k) {
      k = Buffer.from(hkdfSync('sha256', this.masterKey, Buffer.alloc(0), `svc-gateway token ${purpose}`, 32));
      this.keys.set(purpose, k);
    }
    return k;
  }

  sign(purpose: string, claims: Record<string, unknown>, ttlSeconds: number): { token: string; expiresAt: number } {
    const exp = Date.now() + ttlSeconds * 1000;
    const body = Buffer.from(JSON.stringify({ ...claims, exp })).toString('base64url');
    const mac = createHmac('sha256', this.key(purpose)).update(body).digest('base64url');
    return { token: `${TOKEN_PREFIX}.${body}.${mac}`, expiresAt: exp };
  }

  /** The claims of a valid token; 401 for a tampered, foreign or expired one. */
  verify<T extends Record<string, unknown>>(purpose: string, token: string): T & { exp: number } {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== TOKEN_PREFIX) throw apiError('unauthenticated', 'The token is malformed.');
    // Compared as text, not decoded bytes: base64url's last character carries spare bits,
    // so several spellings decode to the same MAC, and only the canonical one is the token.
    const want = Buffer.from(createHmac('sha256', this.key(purpose)).update(parts[1]).digest('base64url'));
    const got = Buffer.from(parts[2]);
    if (got.length !== want.length || !timingSafeEqual(got, want))
      throw apiError('unauthenticated', 'The token signature is not valid.');
    let claims: T & { exp: number };
    try {
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      throw apiError('unauthenticated', 'The token is malformed.');
    }
    if (typeof claims.exp !== 'number' || claims.exp < Date.now())
      throw apiError('unauthenticated', 'The token has expired.');
    return claims;
  }
}
