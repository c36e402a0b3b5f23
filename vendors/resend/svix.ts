import { createHmac, timingSafeEqual } from 'node:crypto';

// Resend signs its webhooks with Svix (resend.com/docs/dashboard/webhooks/verify-webhooks-requests):
// `svix-signature` holds one or more space-separated `v1,<base64 HMAC-SHA256>` of
// `<svix-id>.<svix-timestamp>.<body>`, keyed with the base64 part of the `whsec_…` secret.

/** How far a signed timestamp may be from now, either way: older is a replay, newer a forged clock. */
export const SVIX_TOLERANCE_MS = 5 * 60_000;

/** The HMAC key of a `whsec_<base64>` signing secret. */
export function svixKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** The `v1,<base64>` signature of one message, as Svix computes it. */
export function svixSignature(key: Buffer, id: string, timestamp: string, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

/**
 * Why a webhook does not verify, or undefined when it does: the three headers present, the
 * timestamp within the tolerance, and one of the listed signatures equal (in constant time) to ours.
 */
export function svixRefusal(
  key: Buffer,
  headers: Record<string, string>,
  body: string,
  nowMs: number
): string | undefined {
  const id = headers['svix-id'];
  const timestamp = headers['svix-timestamp'];
  const signatures = headers['svix-signature'];
  if (!id || !timestamp || !signatures) return 'the svix-id, svix-timestamp or svix-signature header is missing';
  const seconds = /^[0-9]{1,12}$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  if (!Number.isFinite(seconds) || Math.abs(nowMs - seconds * 1000) > SVIX_TOLERANCE_MS)
    return 'svix-timestamp is not within 5 minutes of now';
  const want = Buffer.from(svixSignature(key, id, timestamp, body));
  for (const candidate of signatures.split(' ')) {
    const got = Buffer.from(candidate);
    if (got.length === want.length && timingSafeEqual(got, want)) return undefined;
  }
  return 'no svix-signature matches the body';
}
