import { addressHeader, parseRetryAfter, VendorFailure, type EmailSendInput } from '../../core/kit/vendor.js';

// Postmark's send wire (postmarkapp.com/developer/api/email-api): the JSON body of `POST /email`,
// and its error answer `{ErrorCode, Message}` (postmarkapp.com/developer/api/overview#error-codes).

/** The JSON body of `POST /email`; recipients comma-joined as Postmark takes them. */
export function postmarkBody(input: EmailSendInput, messageStream: string): Record<string, unknown> {
  const list = (l: EmailSendInput['to']) => l.map(addressHeader).join(', ');
  const body: Record<string, unknown> = {
    From: addressHeader(input.from),
    To: list(input.to),
    Subject: input.subject,
    MessageStream: messageStream,
  };
  if (input.cc.length) body.Cc = list(input.cc);
  if (input.bcc.length) body.Bcc = list(input.bcc);
  if (input.reply_to) body.ReplyTo = addressHeader(input.reply_to);
  if (input.html !== undefined) body.HtmlBody = input.html;
  if (input.text !== undefined) body.TextBody = input.text;
  const headers = Object.entries(input.headers);
  if (headers.length) body.Headers = headers.map(([Name, Value]) => ({ Name, Value }));
  if (input.attachments.length)
    body.Attachments = input.attachments.map((a) => ({
      Name: a.filename,
      Content: a.content,
      ContentType: a.content_type,
    }));
  return body;
}

/** Postmark's ErrorCodes that say the account, not the message, may not send now. */
const ACCOUNT_CANNOT_SEND = new Set([405, 412, 413]);

/**
 * A Postmark error answer as the router's kind. Postmark refuses a message with HTTP 422 and
 * an ErrorCode: 10 is the token (`auth`), 405/412/413 the account (out of credits, pending,
 * may not send: `quota`), 300 (invalid request), 406 (inactive recipient) and the rest the
 * message itself (`client_error`). ErrorCode 100 is Postmark down for maintenance, which took
 * nothing (`not_sent`); any other 5xx may come after Postmark took the message: `unavailable`.
 */
export function postmarkFailure(status: number, text: string, retryAfter: string | null): VendorFailure {
  let body: { ErrorCode?: unknown; Message?: unknown } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const code = typeof body?.ErrorCode === 'number' ? body.ErrorCode : undefined;
  const detail = typeof body?.Message === 'string' ? body.Message : text.slice(0, 500) || 'no body';
  const message = `postmark answered ${status}${code !== undefined ? ` (ErrorCode ${code})` : ''}: ${detail}`;
  const opts = { status, retryAfterMs: parseRetryAfter(retryAfter) };
  if (status === 401 || status === 403 || code === 10) return new VendorFailure('auth', message, opts);
  if (status === 429) return new VendorFailure('rate_limited', message, opts);
  if (code === 100) return new VendorFailure('not_sent', message, opts);
  if (status >= 500) return new VendorFailure('unavailable', message, opts);
  if (code !== undefined && ACCOUNT_CANNOT_SEND.has(code)) return new VendorFailure('quota', message, opts);
  return new VendorFailure('client_error', message, opts);
}
