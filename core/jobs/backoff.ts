/**
 * Exponential backoff with jitter: the n-th failed attempt (1-based) waits between half and
 * all of base·2^(n-1), capped, so retries from many jobs that failed together spread out.
 */
export function backoffMs(attempt: number, baseMs = 1000, capMs = 3_600_000, random = Math.random): number {
  const d = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(d / 2 + random() * (d / 2));
}
