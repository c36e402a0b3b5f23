/** ISO 8601 UTC with milliseconds, the only timestamp format on the wire. */
export function iso(ms: number | Date = Date.now()): string {
  return new Date(ms).toISOString();
}

export function now(): number {
  return Date.now();
}
