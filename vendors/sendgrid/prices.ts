/**
 * What one email costs at SendGrid (sendgrid.com/pricing): the Essentials plan's 50,000 emails a
 * month for 19.95 USD, about 0.0004 USD an email, each recipient counting as one email. An
 * operator on another plan sets `price_usd_per_email` to its own rate.
 */
export const SENDGRID_USD_PER_EMAIL = 0.0004;

/** A message to `recipients` addresses, in micro-USD. */
export function sendgridPrice(usdPerEmail: number, recipients: number): number {
  return Math.ceil(usdPerEmail * 1_000_000 * Math.max(1, recipients));
}
