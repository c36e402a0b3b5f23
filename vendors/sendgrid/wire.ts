import { now, parseRetryAfter, VendorFailure, type EmailAddress, type EmailSendInput } from '../../core/kit/vendor.js';

// SendGrid's v3 Mail Send wire (https://www.twilio.com/docs/sendgrid/api-reference/mail-send):
// the JSON body of `POST /v3/mail/send` built from the contract, and its error answers as the
// router's failure kinds.

interface SgAddress {
  email: string;
  name?: string;
}

const sg = (a: EmailAddress): SgAddress => (a.name ? { email: a.address, name: a.name } : { email: a.address });

/**
 * One personalization's to, cc and bcc. SendGrid refuses an address named twice in one
 * personalization (to, cc and bcc together), so later mentions are left out: it gets one copy.
 */
function envelope(input: EmailSendInput) {
  const seen = new Set<string>();
  const once = (list: EmailAddress[]) =>
    list.filter((a) => {
      const k = a.address.toLowerCase();
      return !seen.has(k) && !!seen.add(k);
    });
  const to = once(input.to);
  const cc = once(input.cc);
  const bcc = once(input.bcc);
  return {
    to: to.map(sg),
    ...(cc.length ? { cc: cc.map(sg) } : {}),
    ...(bcc.length ? { bcc: bcc.map(sg) } : {}),
  };
}

/**
 * The Mail Send body. SendGrid signs with its own authenticated domain (the contract's DKIM key is
 * not passed) and sets its own Message-ID; `custom_args.svc_id` carries the record id into every
 * event it reports.
 */
export function mailSendBody(input: EmailSendInput): Record<string, unknown> {
  // A personalization must name a To; a message whose every To was suppressed has none to give.
  if (!input.to.length)
    throw new VendorFailure('client_error', 'sendgrid: a message needs at least one To recipient at SendGrid');
  const content = [
    ...(input.text !== undefined ? [{ type: 'text/plain', value: input.text }] : []),
    ...(input.html !== undefined ? [{ type: 'text/html', value: input.html }] : []),
  ];
  if (!content.length) throw new VendorFailure('client_error', 'sendgrid: the message has no text or html part');
  return {
    personalizations: [envelope(input)],
    from: sg(input.from),
    ...(input.reply_to ? { reply_to: sg(input.reply_to) } : {}),
    subject: input.subject,
    content,
    ...(input.attachments.length
      ? {
          attachments: input.attachments.map((a) => ({
            content: a.content,
            filename: a.filename,
            type: a.content_type,
            disposition: 'attachment',
          })),
        }
      : {}),
    ...(Object.keys(input.headers).length ? { headers: input.headers } : {}),
    custom_args: { svc_id: input.idempotency_key },
  };
}

/** Recipients SendGrid counts as emails (each address once). */
export function recipientCount(input: EmailSendInput): number {
  return new Set([...input.to, ...input.cc, ...input.bcc].map((a) => a.address.toLowerCase())).size;
}

/** SendGrid's `{errors: [{message, field}]}` as one line. */
function errorText(text: string): string {
  let errors: Array<{ message?: string; field?: string | null }> | undefined;
  try {
    errors = (JSON.parse(text) as { errors?: typeof errors }).errors;
  } catch {
    errors = undefined;
  }
  if (Array.isArray(errors) && errors.length)
    return errors.map((e) => (e.field ? `${e.field}: ${e.message}` : String(e.message))).join('; ');
  return text.slice(0, 500) || 'no body';
}

/**
 * A Mail Send error as the router's kind. SendGrid answers an error before it queues anything
 * (202 is its only acceptance): 429 is its rate limit, whose reset is `X-RateLimit-Reset` (Unix
 * seconds); 413 keeps its status so the area reports the message as too large.
 */
export function sendgridFailure(status: number, text: string, headers: Headers): VendorFailure {
  const message = `sendgrid answered ${status}: ${errorText(text)}`;
  const reset = Number(headers.get('x-ratelimit-reset'));
  const retryAfterMs =
    parseRetryAfter(headers.get('retry-after'))
    ?? (Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - now()) : undefined);
  const opts = { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  if (status === 401 || status === 403) return new VendorFailure('auth', message, opts);
  if (status === 429) return new VendorFailure('rate_limited', message, opts);
  if (status >= 500) return new VendorFailure('unavailable', message, opts);
  return new VendorFailure('client_error', message, opts);
}
