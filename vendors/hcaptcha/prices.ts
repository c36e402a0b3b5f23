/**
 * hCaptcha's free plan charges nothing per verification; Pro includes 100,000 a month and bills
 * $0.99 per 1,000 past them (hcaptcha.com/pro). An operator past the quota sets 0.00099.
 */
export const HCAPTCHA_USD_PER_VERIFICATION = 0;
