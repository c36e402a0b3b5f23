/**
 * The gateway's own proof of work costs the operator one SHA-256 and one HMAC a verification,
 * and a row in the replay store until the challenge expires: a token price, $0.01 per 1,000,
 * so the meter shows the calls.
 */
export const SERVICE_USD_PER_VERIFICATION = 0.00001;
