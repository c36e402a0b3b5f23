// Money is integer micro-USD inside; the wire shows USD numbers.
export const MICROS_PER_USD = 1_000_000;

export function usdToMicros(usd: number): number {
  return Math.round(usd * MICROS_PER_USD);
}

export function microsToUsd(micros: number): number {
  // Round to the micro so binary floating point never shows 4.999999999.
  return Math.round(micros) / MICROS_PER_USD;
}

/** "0.120000" style string for headers and messages. */
export function formatUsd(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(Math.round(micros));
  return `${sign}${Math.floor(abs / MICROS_PER_USD)}.${String(abs % MICROS_PER_USD).padStart(6, '0')}`;
}
