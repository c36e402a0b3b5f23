/** One message, in micro-USD, at the price the operator configured for the server (a relay's per-message fee). */
export function smtpPrice(usdPerMessage: number): number {
  return Math.ceil(usdPerMessage * 1_000_000);
}
