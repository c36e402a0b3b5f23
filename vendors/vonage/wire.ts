import {
  kindFromStatus,
  parseRetryAfter,
  VendorFailure,
  type FailureKind,
  type SmsState,
} from '../../core/kit/vendor.js';

// Vonage's SMS API wire (https://developer.vonage.com/en/api/sms): its answer to a send, the
// status codes of each message in it, and the delivery receipts it sends back.

/** One part of a message in Vonage's answer to `POST /sms/json`. */
export interface VonagePart {
  status: string;
  'message-id'?: string;
  'message-price'?: string;
  'error-text'?: string;
  to?: string;
}

/** Vonage's answer to a send: one entry a part, each with its own status. */
export interface VonageAnswer {
  'message-count'?: string | number;
  messages?: VonagePart[];
}

/**
 * Every status of a part Vonage documents, as the router's kind (only status 0 is a sent part).
 * A part with any other status was not sent and not billed, so `rate_limited` and `not_sent`
 * let the outbox send again; a refusal of the message itself is `client_error`, of the
 * account `auth` or `quota`.
 */
export const VONAGE_STATUSES: Record<string, { kind: FailureKind; what: string }> = {
  '1': { kind: 'rate_limited', what: 'Throttled: sending faster than the account may' },
  '2': { kind: 'client_error', what: 'Missing parameters' },
  '3': { kind: 'client_error', what: 'Invalid parameters' },
  '4': { kind: 'auth', what: 'Invalid credentials' },
  '5': { kind: 'not_sent', what: 'Internal error: Vonage did not process the message' },
  '6': { kind: 'client_error', what: 'Invalid message: Vonage could not route it' },
  '7': { kind: 'client_error', what: 'Number barred' },
  '8': { kind: 'auth', what: 'Partner account barred: the account is suspended' },
  '9': { kind: 'quota', what: 'Partner quota violation: not enough credit' },
  '10': { kind: 'rate_limited', what: 'Too many existing binds' },
  '11': { kind: 'auth', what: 'Account not enabled for HTTP' },
  '12': { kind: 'client_error', what: 'Message too long' },
  '14': { kind: 'auth', what: 'Invalid signature' },
  '15': { kind: 'client_error', what: 'Invalid sender address' },
  '22': { kind: 'client_error', what: 'Invalid network code' },
  '23': { kind: 'client_error', what: 'Invalid callback URL' },
  '29': { kind: 'client_error', what: 'Non-whitelisted destination (a demo account)' },
  '32': { kind: 'auth', what: 'Signature and API secret disallowed' },
  '33': { kind: 'client_error', what: 'Number deactivated' },
};

/** A part's status ≠ "0" as a failure; a status Vonage does not document still says "not sent", read as final. */
export function vonageStatusFailure(part: VonagePart): VendorFailure {
  const known = VONAGE_STATUSES[part.status];
  const text = part['error-text'] ?? known?.what ?? 'undocumented status';
  return new VendorFailure(
    known?.kind ?? 'client_error',
    `vonage refused the message (status ${part.status}): ${text}`
  );
}

/**
 * An HTTP answer other than 200. Vonage answers refusals with 200 and a status per part, so
 * this is a proxy's or an outage's: a 5xx may follow acceptance and stays `unavailable`.
 */
export function vonageHttpFailure(status: number, text: string, retryAfter: string | null): VendorFailure {
  const message = `vonage answered ${status}: ${text.slice(0, 500) || 'no body'}`;
  return new VendorFailure(kindFromStatus(status), message, { status, retryAfterMs: parseRetryAfter(retryAfter) });
}

/**
 * A delivery receipt's `status` as the record's state; null for one that moves nothing.
 * `expired`: the carrier gave up within the validity period. `rejected`: Vonage or the carrier
 * refused it after acceptance, which the record shows as `failed` (the area moves a sent
 * message to delivered, undelivered or failed). `unknown`: the carrier told nothing.
 */
export function vonageState(status: string): SmsState | null {
  switch (status) {
    case 'delivered':
      return 'delivered';
    case 'expired':
      return 'undelivered';
    case 'failed':
    case 'rejected':
      return 'failed';
    case 'accepted':
    case 'buffered':
      return 'sent';
    default:
      return null;
  }
}

/**
 * A receipt's parameters, however Vonage sent it: GET with a query string (its default), POST
 * as a form, or POST-JSON (every value a string, as Vonage sends them).
 */
export function receiptParams(url: string, headers: Record<string, string>, body: string): Record<string, string> {
  const out: Record<string, string> = {};
  const type = headers['content-type'] ?? '';
  if (body && type.startsWith('application/json')) {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return out;
    }
    if (!json || typeof json !== 'object' || Array.isArray(json)) return out;
    for (const [k, v] of Object.entries(json)) if (v !== null && typeof v !== 'object') out[k] = String(v);
    return out;
  }
  const search = body ? new URLSearchParams(body) : new URL(url).searchParams;
  for (const [k, v] of search) out[k] = v;
  return out;
}

/**
 * The message id and part count of a send Vonage accepted whole, else the failure: none of
 * its parts sent (by the first part's status), or only some, which the recipient has already
 * seen part of, so that is `unavailable` and never resent.
 */
export function vonageSent(answer: VonageAnswer): { vendor_message_id: string; segments: number } {
  const parts = Array.isArray(answer.messages) ? answer.messages : [];
  if (parts.length === 0) throw new VendorFailure('unavailable', 'vonage answered a send without messages');
  const refused = parts.filter((p) => p.status !== '0');
  if (refused.length === parts.length) throw vonageStatusFailure(parts[0]);
  if (refused.length > 0)
    throw new VendorFailure(
      'unavailable',
      `vonage sent ${parts.length - refused.length} of ${parts.length} parts; ${vonageStatusFailure(refused[0]).message}`
    );
  const id = parts[0]['message-id'];
  if (typeof id !== 'string' || !id) throw new VendorFailure('unavailable', 'vonage answered without a message-id');
  const counted = Number(answer['message-count']);
  return { vendor_message_id: id, segments: Number.isInteger(counted) && counted > 0 ? counted : parts.length };
}
