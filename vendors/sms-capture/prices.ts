/** A captured message leaves the machine never: there is no segment to pay for. */
export const CAPTURE_SEGMENT_MICROS = 0;
