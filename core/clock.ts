/** ISO 8601 UTC with milliseconds, the only timestamp format on the wire. */
export function iso(ms: number | Date = Date.now()): string {
  return new Date(ms).toISOString();
}

let source: () => number = Date.now;

/**
 * The clock that decisions about schedules read (cron slots, how late a tick is): one place a
 * test can move time without waiting for it.
 */
export function now(): number {
  return source();
}

/** Replace the clock `now()` reads (a test's fake clock); returns the function that puts the last one back. */
export function setClock(fn: () => number): () => void {
  const previous = source;
  source = fn;
  return () => {
    source = previous;
  };
}

/**
 * When a URL signed now for `seconds` stops working, at the latest: SigV4 and POST policies
 * sign whole seconds, so this counts from the start of the current second (a URL signed a
 * tick later expires later than this, never earlier).
 */
export function signedUntil(seconds: number, ms = Date.now()): number {
  return Math.floor(ms / 1000) * 1000 + seconds * 1000;
}

/** Epoch ms of an `YYYYMMDDTHHMMSSZ` date, or NaN. */
export function parseAmzDate(s: string): number {
  // Requests signed in the same second share their date: parse it once.
  if (s === lastAmz.s) return lastAmz.ms;
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  const ms = m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
  lastAmz = { s, ms };
  return ms;
}

let lastAmz = { s: '', ms: NaN };

/** Epoch ms when a SigV4 presigned URL stops working (X-Amz-Date + X-Amz-Expires), or undefined when it carries neither. */
export function presignedExpiry(url: string): number | undefined {
  const q = new URL(url).searchParams;
  const signedAt = parseAmzDate(q.get('X-Amz-Date') ?? '');
  const seconds = Number(q.get('X-Amz-Expires') ?? NaN);
  return Number.isFinite(signedAt) && Number.isInteger(seconds) ? signedAt + seconds * 1000 : undefined;
}
