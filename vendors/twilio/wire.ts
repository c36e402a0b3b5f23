import { createHmac, timingSafeEqual } from 'node:crypto';
import { parseRetryAfter, VendorFailure, type SmsState } from '../../core/kit/vendor.js';

// Twilio's Messages wire: its error body, its message statuses, and the X-Twilio-Signature of
// the callbacks it posts (https://www.twilio.com/docs/usage/security#validating-requests).

/** Twilio's answer to a send (a Message resource), the fields read here. */
export interface TwilioMessage {
  sid: string;
  status: string;
  num_segments?: string | number | null;
  error_code?: number | null;
  error_message?: string | null;
  to?: string;
  from?: string | null;
  body?: string;
  direction?: string;
  /** RFC 2822, `Thu, 03 Dec 2026 06:20:00 +0000`. */
  date_created?: string;
  /** Null while Twilio still queues the message. */
  date_sent?: string | null;
}

/** A page of `GET …/Messages.json`: newest first, `next_page_uri` (from the host) until the last page. */
export interface TwilioMessagePage {
  messages: TwilioMessage[];
  next_page_uri: string | null;
}

/**
 * Twilio's error codes that refuse the recipient for good (https://www.twilio.com/docs/api/errors):
 * 21211 invalid To, 21217 not a valid number, 21610 unsubscribed (replied STOP), 21612 not
 * reachable by SMS, 21614 not a mobile number, 21635 a landline. Another try cannot help.
 */
const RECIPIENT_REFUSED = new Set([21211, 21217, 21610, 21612, 21614, 21635]);

/**
 * Twilio's message status as the record's state; null for a status that moves nothing
 * (still on its way inside Twilio, or an inbound message's).
 */
export function twilioState(status: string): SmsState | null {
  switch (status) {
    case 'sent':
      return 'sent';
    case 'delivered':
    case 'read':
      return 'delivered';
    case 'undelivered':
      return 'undelivered';
    case 'failed':
    case 'canceled':
      return 'failed';
    default:
      return null;
  }
}

/**
 * A Twilio error answer as the router's kind. Twilio answers an error only when it created no
 * message, so a 429 or a 5xx that carries Twilio's own error body did not send anything:
 * `not_sent`, which lets the router try another vendor. A 5xx without that body (a proxy's)
 * may come after the message was made and stays `unavailable`, as a timeout stays `timeout`.
 */
export function twilioFailure(status: number, text: string, retryAfter: string | null): VendorFailure {
  let body: { code?: number; message?: string } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const twilioError = typeof body?.code === 'number';
  const message = `twilio answered ${status}${twilioError ? ` (error ${body!.code})` : ''}: ${body?.message ?? (text.slice(0, 500) || 'no body')}`;
  const refused = twilioError && RECIPIENT_REFUSED.has(body!.code!) ? { recipientRefused: String(body!.code) } : {};
  const opts = { status, retryAfterMs: parseRetryAfter(retryAfter), ...refused };
  if (status === 401 || status === 403) return new VendorFailure('auth', message, opts);
  if ((status === 429 || status >= 500) && twilioError) return new VendorFailure('not_sent', message, opts);
  if (status === 429) return new VendorFailure('rate_limited', message, opts);
  if (status >= 500) return new VendorFailure('unavailable', message, opts);
  // 400: a number Twilio cannot reach (21211, 21614), an opted-out one (21610), a region the account may not use.
  return new VendorFailure('client_error', message, opts);
}

/** X-Twilio-Signature of a form post: HMAC-SHA1 with the auth token over the URL and the sorted parameters. */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const keys = [...new Set(params.keys())].sort();
  let data = url;
  for (const k of keys) for (const v of params.getAll(k).sort()) data += k + v;
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** Whether `signature` is Twilio's for this post, compared in constant time. */
export function validTwilioSignature(authToken: string, url: string, params: URLSearchParams, signature: string) {
  const want = Buffer.from(twilioSignature(authToken, url, params));
  const got = Buffer.from(signature);
  return want.length === got.length && timingSafeEqual(want, got);
}
