import { addressHeader, parseRetryAfter, VendorFailure, type EmailSendInput } from '../../core/kit/vendor.js';

// Resend's send wire (resend.com/docs/api-reference/emails/send-email): the JSON body of
// `POST /emails`, and its error answer `{statusCode, name, message}` as the router's kinds.

/** The JSON body of `POST /emails`; empty lists and absent parts are left out. */
export function resendBody(input: EmailSendInput): Record<string, unknown> {
  const list = (l: EmailSendInput['to']) => l.map(addressHeader);
  const body: Record<string, unknown> = {
    from: addressHeader(input.from),
    to: list(input.to),
    subject: input.subject,
  };
  if (input.cc.length) body.cc = list(input.cc);
  if (input.bcc.length) body.bcc = list(input.bcc);
  if (input.reply_to) body.reply_to = addressHeader(input.reply_to);
  if (input.html !== undefined) body.html = input.html;
  if (input.text !== undefined) body.text = input.text;
  if (Object.keys(input.headers).length) body.headers = input.headers;
  if (input.attachments.length)
    body.attachments = input.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      content_type: a.content_type,
    }));
  return body;
}

const QUOTA = new Set(['daily_quota_exceeded', 'monthly_quota_exceeded']);

/**
 * A Resend error answer as the router's kind. Resend names its error (`name`): a 429 is the
 * rate limit (nothing sent: `rate_limited`, which the outbox retries) unless it names a quota,
 * which no retry today fixes. A 403 `validation_error` is the message's own fault (a domain not
 * verified, a test key sending to another address), any other 401/403 the key's. A 5xx may come
 * after Resend took the message, and a 409 for a request under the same key still running means
 * the first may yet send: both stay `unavailable`, never `not_sent`, so nothing goes out twice.
 */
export function resendFailure(status: number, text: string, retryAfter: string | null): VendorFailure {
  let body: { name?: unknown; message?: unknown } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const name = typeof body?.name === 'string' ? body.name : '';
  const detail = typeof body?.message === 'string' ? body.message : text.slice(0, 500) || 'no body';
  const message = `resend answered ${status}${name ? ` (${name})` : ''}: ${detail}`;
  const opts = { status, retryAfterMs: parseRetryAfter(retryAfter) };
  if (status === 429) return new VendorFailure(QUOTA.has(name) ? 'quota' : 'rate_limited', message, opts);
  if (status === 403 && name === 'validation_error') return new VendorFailure('client_error', message, opts);
  if (status === 401 || status === 403) return new VendorFailure('auth', message, opts);
  if (status === 409 && name === 'concurrent_idempotent_requests')
    return new VendorFailure('unavailable', message, opts);
  if (status >= 500) return new VendorFailure('unavailable', message, opts);
  // 400/422 validation_error, missing_required_field, invalid_attachment; 409 invalid_idempotent_request.
  return new VendorFailure('client_error', message, opts);
}
