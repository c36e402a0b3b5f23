/** Cloudflare Turnstile is free at any volume (developers.cloudflare.com/turnstile/plans): nothing per verification. */
export const TURNSTILE_USD_PER_VERIFICATION = 0;
