/** ISO 8601 UTC with milliseconds, the only timestamp format on the wire. */
export function iso(ms: number | Date = Date.now()): string {
  return new Date(ms).toISOString();
}

export function now(): number {
  return Date.now();
}

/**
 * When a URL signed now for `seconds` stops working, at the latest: SigV4 and POST policies
 * sign whole seconds, so this counts from the start of the current second (a URL signed a
 * tick later expires later than this, never earlier).
 */
export function signedUntil(seconds: number, ms = Date.now()): number {
  return Math.floor(ms / 1000) * 1000 + seconds * 1000;
}
