/**
 * reCAPTCHA past its free 10,000 assessments a month: $1 per 1,000 (cloud.google.com/recaptcha/pricing,
 * Enterprise tier's marginal rate), so 0.001 per verification.
 */
export const RECAPTCHA_USD_PER_VERIFICATION = 0.001;
