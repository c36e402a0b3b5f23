/**
 * Twilio's list price of one outbound SMS segment to a US number (twilio.com/en-us/sms/pricing/us),
 * before carrier fees; other countries cost more, so an operator sending abroad sets
 * `segment_price_usd` to its own rate.
 */
export const TWILIO_US_SEGMENT_USD = 0.0083;
