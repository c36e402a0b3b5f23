import { createHash, timingSafeEqual } from 'node:crypto';
import type { EmailEventUpdate } from '../../core/kit/vendor.js';

// Postmark's webhooks (postmarkapp.com/developer/webhooks/webhooks-overview): one event a POST,
// JSON with a RecordType, authenticated only by the HTTP Basic credentials the operator wrote
// into the webhook's URL (`https://user:pass@gateway/v1/email/webhooks/{instance}`).

/**
 * Whether the Authorization header carries exactly these Basic credentials. Both sides are
 * hashed first, so the comparison is constant in time and length alike.
 */
export function basicAuthMatches(header: string | undefined, username: string, password: string): boolean {
  const want = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(header ?? ''), digest(want));
}

/**
 * Bounce types that say the address itself is bad (postmarkapp.com/developer/api/bounce-api#bounce-types):
 * only these suppress it. A soft bounce, a DNS error, an auto-reply or a challenge moves nothing.
 */
const PERMANENT_BOUNCES = new Set(['HardBounce', 'BadEmailAddress', 'ManuallyDeactivated']);

interface PostmarkEvent {
  RecordType?: unknown;
  MessageID?: unknown;
  Recipient?: unknown;
  Email?: unknown;
  Type?: unknown;
  Description?: unknown;
  Details?: unknown;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** What a Postmark event says happened: Delivery, Bounce or SpamComplaint; every other RecordType is none. */
export function postmarkEvents(body: string): EmailEventUpdate[] {
  let e: PostmarkEvent;
  try {
    e = JSON.parse(body) as PostmarkEvent;
  } catch {
    return [];
  }
  const id = str(e?.MessageID);
  if (!id) return [];
  switch (e.RecordType) {
    case 'Delivery':
      return [{ vendor_message_id: id, state: 'delivered', recipients: [str(e.Recipient)].filter(Boolean) }];
    case 'Bounce': {
      const detail = [str(e.Type), str(e.Description), str(e.Details)].filter(Boolean).join(': ');
      return [
        {
          vendor_message_id: id,
          state: 'bounced',
          recipients: [str(e.Email)].filter(Boolean),
          permanent: PERMANENT_BOUNCES.has(str(e.Type)),
          ...(detail ? { detail } : {}),
        },
      ];
    }
    case 'SpamComplaint':
      return [{ vendor_message_id: id, state: 'complained', recipients: [str(e.Email)].filter(Boolean) }];
    default:
      return [];
  }
}
