import { apiError, type Svc } from '../../core/kit/area.js';
import { granted } from './channel-names.js';

const PURPOSE = 'realtime client';

/** What a client token says; short names keep the URL it travels in short. */
export interface ClientClaims {
  /** Account. */
  a: string;
  /** Client id. */
  c: string;
  /** The account's tier when the token was made (limits apply without a database read). */
  tr: string;
  u?: string;
  /** Channel grants; absent: public channels only. */
  ch?: string[];
  /** May publish. */
  p?: boolean;
  exp: number;
}

export function signClientToken(svc: Svc, claims: Omit<ClientClaims, 'exp'>, ttlSeconds: number) {
  return svc.tokens.sign(PURPOSE, { ...claims }, ttlSeconds);
}

/** The claims of a valid token; 401 unauthenticated for a malformed, tampered or expired one. */
export function verifyClientToken(svc: Svc, token: string): ClientClaims {
  const c = svc.tokens.verify<Record<string, unknown>>(PURPOSE, token) as unknown as ClientClaims;
  if (typeof c.a !== 'string' || typeof c.c !== 'string') throw apiError('unauthenticated', 'The token is malformed.');
  return c;
}

/** Whether the token may use `channel` of `type`: public ones unless it names a list, others only by its list. */
export function mayUse(c: ClientClaims, channel: string, type: string): boolean {
  if (c.ch) return granted(c.ch, channel);
  return type === 'public';
}
