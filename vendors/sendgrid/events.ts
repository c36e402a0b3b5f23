import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { now, VendorFailure, type EmailEventUpdate, type EmailWebhookInput } from '../../core/kit/vendor.js';

// SendGrid's Event Webhook (https://www.twilio.com/docs/sendgrid/for-developers/tracking-events):
// a JSON array of events, signed with ECDSA P-256 over the timestamp header followed by the raw
// body; the public key is the one the Signed Event Webhook settings show (base64 DER SPKI).

export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';
/** A signed post older (or newer) than this is refused: a captured one cannot be replayed later. */
export const MAX_SKEW_MS = 10 * 60_000;

/** The configured verification key; a value that is not a P-256 public key stops the boot. */
export function webhookKey(base64Der: string): KeyObject {
  const key = createPublicKey({ key: Buffer.from(base64Der, 'base64'), format: 'der', type: 'spki' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new Error('webhook_public_key is not an ECDSA P-256 public key');
  return key;
}

/** Throws VendorFailure 'auth' unless the post carries SendGrid's valid, recent signature. */
export function checkSignature(key: KeyObject | undefined, input: EmailWebhookInput): void {
  const refuse = (why: string) => new VendorFailure('auth', `sendgrid event webhook: ${why}`);
  if (!key) throw refuse('no webhook_public_key is configured, so no event can be verified');
  const signature = input.headers[SIGNATURE_HEADER];
  const timestamp = input.headers[TIMESTAMP_HEADER];
  if (!signature || !timestamp) throw refuse('the signature or timestamp header is missing');
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now() - Number(timestamp) * 1000) > MAX_SKEW_MS)
    throw refuse('the timestamp is not within 10 minutes of now');
  const ok = verify('sha256', Buffer.from(timestamp + input.body, 'utf8'), key, Buffer.from(signature, 'base64'));
  if (!ok) throw refuse('the signature does not verify');
}

interface SgEvent {
  email?: string;
  event?: string;
  sg_message_id?: string;
  type?: string;
  reason?: string;
  status?: string;
  response?: string;
}

/** `sg_message_id` is the send's X-Message-Id, then `.filter…` (which SendGrid server sent it). */
function messageIdOf(e: SgEvent): string | undefined {
  const id = typeof e.sg_message_id === 'string' ? e.sg_message_id.split('.')[0] : '';
  return id || undefined;
}

/** `{ detail }` of the parts SendGrid gave (a status, a reason), or nothing. */
function detailOf(...parts: Array<string | undefined>): { detail?: string } {
  const detail = parts.filter((p) => typeof p === 'string' && p).join(' ');
  return detail ? { detail } : {};
}

/** One event as the contract's update, or null for one that moves nothing. */
function updateOf(e: SgEvent): EmailEventUpdate | null {
  const id = messageIdOf(e);
  if (!id || typeof e.email !== 'string') return null;
  const base = { vendor_message_id: id, recipients: [e.email] };
  switch (e.event) {
    case 'delivered':
      return { ...base, state: 'delivered', ...detailOf(e.response) };
    case 'bounce':
      // `blocked` is a refusal the receiver may lift (a block list, a full mailbox): transient.
      return { ...base, state: 'bounced', permanent: e.type !== 'blocked', ...detailOf(e.status, e.reason) };
    case 'spamreport':
      return { ...base, state: 'complained' };
    default:
      // processed, deferred, open, click, unsubscribes; and `dropped`: SendGrid never sent it
      // (an address on its own bounce or spam list), which none of the record's states says.
      return null;
  }
}

/** The verified body's events as updates; a signed body of another shape has none to give. */
export function sendgridUpdates(body: string): EmailEventUpdate[] {
  let events: unknown;
  try {
    events = JSON.parse(body);
  } catch {
    return [];
  }
  if (!Array.isArray(events)) return [];
  return events
    .filter((e): e is SgEvent => !!e && typeof e === 'object')
    .map(updateOf)
    .filter((u): u is EmailEventUpdate => u !== null);
}
