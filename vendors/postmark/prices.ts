/**
 * What one email costs past a Postmark plan's quota: $1.80 per 1,000 on Basic
 * (postmarkapp.com/pricing), and Postmark counts every To, Cc and Bcc address as one email. The
 * plan's fixed fee is the operator's; the marginal rate is what a message adds.
 */
export const POSTMARK_USD_PER_RECIPIENT = 0.0018;
