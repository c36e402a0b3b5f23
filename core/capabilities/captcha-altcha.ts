// The ALTCHA v1 token as the widget submits it: the captcha area reads which site key a token names
// before the `service` vendor checks it; both read it here.

/** An ALTCHA v1 solution as the widget submits it (base64 JSON), before any check. */
export interface AltchaPayload {
  /** The only one the gateway issues. */
  algorithm: 'SHA-256';
  challenge: string;
  number: number;
  salt: string;
  signature: string;
}

/** The payload inside a token, or undefined when the token is not one (wrong encoding, fields, types). */
export function decodeAltcha(token: string): AltchaPayload | undefined {
  let j: any;
  try {
    j = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!j || typeof j !== 'object') return undefined;
  const { algorithm, challenge, number, salt, signature } = j;
  const strings = [algorithm, challenge, salt, signature].every((s) => typeof s === 'string' && s.length > 0);
  if (!strings || algorithm !== 'SHA-256' || !Number.isSafeInteger(number) || number < 0) return undefined;
  return { algorithm, challenge, number, salt, signature };
}

/** The parameters signed into a challenge's salt (`<random>?expires=…&sk=…`). */
export function saltParams(salt: string): Record<string, string> {
  const q = salt.indexOf('?');
  return q < 0 ? {} : Object.fromEntries(new URLSearchParams(salt.slice(q + 1)));
}
