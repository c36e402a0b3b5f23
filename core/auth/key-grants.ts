import { apiError } from '../errors.js';
import { scopeAllows } from './scopes.js';
import type { Principal } from './principal.js';

// What a key may do to other keys. Holding the `account` scope lets a key manage keys, but
// never hand out more than it holds itself: otherwise an `account` key could mint a `*` key,
// or rotate the primary key to receive its secret.

/** 403 unless every scope in `scopes` is granted by `grantor` (`*` grants all; `storage` grants `storage:read`). */
export function requireWithin(grantor: readonly string[], scopes: readonly string[], what: string): void {
  // A requested scope is within the grantor's exactly when the grantor would allow a call
  // requiring it: `*` only by `*`, an area by `*` or the area, a level by those or itself.
  const beyond = scopes.filter((s) => !scopeAllows(grantor, s));
  if (beyond.length) {
    const held = grantor.join(', ');
    const asked = beyond.map((s) => `"${s}"`).join(', ');
    throw apiError(
      'forbidden',
      `This key's scopes (${held}) do not cover ${asked}: a key cannot ${what} beyond its own scopes.`,
      {
        param: 'scopes',
      }
    );
  }
}

/**
 * 403 for a key that was rotated away: during its grace period it still makes ordinary calls,
 * but only the live secret creates, rotates or revokes keys (a leaked old secret must not
 * be able to mint a fresh one).
 */
export function requireLiveKey(p: Principal): void {
  if (p.replacedBy) {
    throw apiError(
      'forbidden',
      `This key was rotated (its successor is ${p.replacedBy}); it works for ordinary calls `
        + 'until it expires, but keys are managed only with the live secret.'
    );
  }
}
