/**
 * Vonage's list price of one outbound SMS part to a US number (vonage.com/communications-apis/sms/pricing),
 * before carrier fees. Vonage bills every part it accepted, delivered or not; other countries
 * cost more, so an operator sending abroad sets `segment_price_usd` to its own rate.
 */
export const VONAGE_US_SEGMENT_USD = 0.00809;
