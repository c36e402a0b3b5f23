import type { EmailSendInput } from '../../core/capabilities/email.js';

/**
 * A message as the email area hands it to a vendor (`email.send`), for adapter tests: two To
 * (one named, one on an IDN domain in punycode), Cc, Bcc, Reply-To, both parts and an attachment.
 */
export const emailMessage = (over: Partial<EmailSendInput> = {}): EmailSendInput => ({
  message_id: '<em_1@mail.example>',
  idempotency_key: 'em_1',
  from: { address: 'news@mail.example', name: 'News' },
  to: [{ address: 'ann@example.org', name: 'Ann' }, { address: 'bob@xn--bcher-kva.example' }],
  cc: [{ address: 'carl@example.org' }],
  bcc: [{ address: 'dora@example.org' }],
  reply_to: { address: 'help@mail.example' },
  subject: 'Grüße',
  text: 'plain',
  html: '<p>html</p>',
  attachments: [{ filename: 'a.txt', content: Buffer.from('attached').toString('base64'), content_type: 'text/plain' }],
  headers: {},
  ...over,
});
