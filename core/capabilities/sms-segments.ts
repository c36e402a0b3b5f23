// How carriers count an SMS's segments, for the area (what it shows and reserves) and the
// adapters (a capture sink has no carrier to ask). GSM 03.38: the basic table costs one
// septet a character, the extension table two (an escape and the character); one character
// outside both turns the whole message into UCS-2, counted in UTF-16 units. A single message
// holds 160 septets or 70 units; the parts of a longer one lose room to the concatenation
// header (153 / 67), and no part splits an escape pair or a surrogate pair.

const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?'
  + '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '\f^{}\\[~]|€';

const BASIC = new Set(GSM_BASIC);
const EXTENSION = new Set(GSM_EXTENSION);

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SmsSegments {
  encoding: SmsEncoding;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) the body takes. */
  units: number;
  /** Segments a carrier bills: 1 for an empty body, as a message is sent all the same. */
  segments: number;
}

const LIMITS: Record<SmsEncoding, { single: number; part: number }> = {
  'GSM-7': { single: 160, part: 153 },
  'UCS-2': { single: 70, part: 67 },
};

/** Each character's cost in its encoding's units, and the encoding the whole body needs. */
function costs(body: string): { encoding: SmsEncoding; costs: number[] } {
  const gsm: number[] = [];
  for (const ch of body) {
    if (BASIC.has(ch)) gsm.push(1);
    else if (EXTENSION.has(ch)) gsm.push(2);
    else return { encoding: 'UCS-2', costs: Array.from(body, (c) => c.length) };
  }
  return { encoding: 'GSM-7', costs: gsm };
}

/** The encoding and segment count a carrier gives `body`. */
export function smsSegments(body: string): SmsSegments {
  const { encoding, costs: each } = costs(body);
  const units = each.reduce((a, b) => a + b, 0);
  const { single, part } = LIMITS[encoding];
  if (units <= single) return { encoding, units, segments: 1 };
  // Filled part by part: a character that does not fit whole starts the next part.
  let segments = 1;
  let used = 0;
  for (const c of each) {
    if (used + c > part) {
      segments++;
      used = 0;
    }
    used += c;
  }
  return { encoding, units, segments };
}
