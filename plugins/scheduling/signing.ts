import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks signatures (https://www.standardwebhooks.com): the signed content is
// `${webhook-id}.${webhook-timestamp}.${body}`, the HMAC-SHA256 key is the base64 part of a
// `whsec_` secret, and `webhook-signature` lists `v1,<base64>` once per secret, so a
// receiver holding either the old or the new secret verifies during a rotation.

const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Whether a caller-supplied secret is a usable `whsec_` secret (24 to 64 key bytes). */
export function isWebhookSecret(s: string): boolean {
  const m = SECRET.exec(s);
  if (!m) return false;
  const n = Buffer.from(m[1], 'base64').length;
  return n >= 24 && n <= 64;
}

export function signatureHeader(secrets: string[], msgId: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((s) => {
      const key = Buffer.from(s.slice('whsec_'.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64')}`;
    })
    .join(' ');
}

/** The three Standard Webhooks headers for one attempt. */
export function signedHeaders(
  secrets: string[],
  msgId: string,
  body: string,
  now = Date.now()
): Record<string, string> {
  const ts = Math.floor(now / 1000);
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(ts),
    'webhook-signature': signatureHeader(secrets, msgId, ts, body),
  };
}
