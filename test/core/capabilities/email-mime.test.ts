// database-independent: the email vendors' MIME builder alone (worker threads, no app)
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { mailOptions, type EmailSendInput } from '../../../core/capabilities/email.js';
import { EmailMimeBuilder, type MimeBuilderOptions } from '../../../core/capabilities/email-mime.js';

const input = (over: Partial<EmailSendInput> = {}): EmailSendInput => ({
  message_id: '<em_1@mail.example>',
  idempotency_key: 'em_1',
  from: { address: 'news@mail.example' },
  to: [{ address: 'ann@example.org' }],
  cc: [],
  bcc: [{ address: 'dora@example.org' }],
  subject: 'Hello',
  text: 'plain',
  attachments: [],
  headers: {},
  ...over,
});

function builder(t: any, name: string, over: Partial<MimeBuilderOptions> = {}) {
  const b = new EmailMimeBuilder({
    name,
    threads: 1,
    perAccount: 1,
    maxQueuedPerAccount: 10,
    maxMemoryMb: 256,
    ...over,
  });
  t.teardown(() => b.close());
  return b;
}

const big = () =>
  input({
    attachments: [{ filename: 'a.bin', content: randomBytes(8 * 1024 * 1024).toString('base64'), content_type: 'x/y' }],
  });

t.test('the message and its envelope: Bcc in the envelope only', async (t) => {
  const out = await builder(t, 'b1').build(mailOptions(input()), { signal: new AbortController().signal });
  t.same(out.envelope, { from: 'news@mail.example', to: ['ann@example.org', 'dora@example.org'] });
  t.ok(Buffer.isBuffer(out.raw));
  t.match(out.raw.toString(), /^Message-ID: <em_1@mail\.example>\r$/m);
  t.notMatch(out.raw.toString(), /dora@/);
});

t.test('failures say nothing was sent: a full queue, an abort, a message over the memory bound', async (t) => {
  const b = builder(t, 'b2', { maxQueuedPerAccount: 0 });
  const ac = new AbortController();
  const first = b.build(mailOptions(big()), { signal: ac.signal, accountId: 'acc' }).catch((e) => e);
  // One running, none may wait: the next of the same account is refused, to be sent again later.
  const refused = await b
    .build(mailOptions(input()), { signal: new AbortController().signal, accountId: 'acc' })
    .catch((e) => e);
  t.match(refused, { name: 'VendorFailure', kind: 'rate_limited' });
  // The first holds the one thread (starting, or building): its caller gives up, its thread is ended.
  ac.abort();
  t.match(await first, { name: 'VendorFailure', kind: 'not_sent' });

  const small = builder(t, 'b3', { maxMemoryMb: 16 });
  const over = await small.build(mailOptions(big()), { signal: new AbortController().signal }).catch((e) => e);
  t.match(over, { name: 'VendorFailure', kind: 'client_error', status: 413 });
});
