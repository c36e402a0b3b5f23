/**
 * What one email costs past a Resend plan's quota: $0.90 per 1,000 on Pro (resend.com/pricing),
 * and Resend counts every To, Cc and Bcc recipient as one email. The plan's fixed fee is the
 * operator's; the marginal rate is what a message adds, so that is what is charged on.
 */
export const RESEND_USD_PER_RECIPIENT = 0.0009;
