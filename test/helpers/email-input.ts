import type { EmailSendInput } from '../../core/capabilities/email.js';

// A fully formed message as the email area hands it to a vendor, for adapter tests: named and
// bare addresses (one name with a comma and a quote), every part, a header, an attachment.

export function emailInput(over: Partial<EmailSendInput> = {}): EmailSendInput {
  return {
    message_id: '<em_test1@example.com>',
    idempotency_key: 'em_test1',
    from: { address: 'noreply@example.com', name: 'Example, Inc.' },
    to: [{ address: 'ann@example.org', name: 'Ann "A" Lee' }, { address: 'bob@xn--bcher-kva.example' }],
    cc: [{ address: 'carl@example.org' }],
    bcc: [{ address: 'dora@example.org' }],
    reply_to: { address: 'help@example.com' },
    subject: 'Hello — Grüße',
    text: 'Hi there',
    html: '<p>Hi there</p>',
    attachments: [
      { filename: 'a.txt', content: Buffer.from('attached').toString('base64'), content_type: 'text/plain' },
    ],
    headers: { 'X-Campaign': 'welcome' },
    ...over,
  };
}

/** Invoke options of a direct adapter call: a live signal and a deadline 30 s out. */
export const invokeOpts = (over: Record<string, unknown> = {}) => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 30_000,
  ...over,
});
