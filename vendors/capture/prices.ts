/** A captured message leaves nothing to pay for: it never leaves the machine. */
export const CAPTURE_PRICE_MICROS = 0;
