import t from 'tap';
import { post, untilState } from '../../plugins/sms/sms-app.js';
import { receiver, verify } from '../../plugins/scheduling/receiver.js';
import { activate, makeApp } from '../../helpers/app.js';
import { until } from '../../helpers/wait.js';
import { count } from './outbox-app.js';
import { twilioApp } from './twilio-app.js';

// A vendor's callback can come before the send job stored the message id it names (Twilio
// posts `sent` while the job still waits for its answer): the outbox keeps it and applies it in
// the transaction that records the id; unclaimed ones go with retention.

t.test('twilio posts its callbacks before answering the send: both applied once the job commits', async (t) => {
  const { app, a, fake, callback } = await twilioApp(t);
  const rx = await receiver(t);
  const secret = (await post(app, a, '/v1/events/endpoints', { url: rx.url })).json().secret;
  const acks: number[] = [];
  fake.beforeAnswer(async (m) => {
    acks.push((await callback(fake.callback(m.sid, 'sent'))).statusCode);
    acks.push((await callback(fake.callback(m.sid, 'delivered'))).statusCode);
  });
  const r = (await post(app, a, '/v1/sms/send', { to: '+14155550100', body: 'early' })).json();
  const delivered = await untilState(app, a, r.sms_id, 'delivered');
  t.same(acks, [200, 200], 'acknowledged to twilio');
  t.equal(delivered.vendor, 'tw');
  t.equal(await count(app, 'outbox_early'), 0, 'applied and removed');
  await rx.waitFor(2);
  t.same(rx.hits.map((h) => (verify(secret, h) as any).type).sort(), ['sms.delivered', 'sms.sent']);
});

t.test('a report for an id no record has is kept, then swept by retention once expired', async (t) => {
  const { app, fake, callback } = await twilioApp(t);
  // A message of this account at twilio that no record of this gateway names.
  fake.messages.push({
    sid: 'SM0123456789abcdef0123456789abcdef',
    to: '+14155550100',
    from: '+15005550006',
    body: 'not ours',
    statusCallback: 'https://gw.example.com/v1/sms/status/tw',
    params: {},
    messagingServiceSid: null,
    createdAt: new Date(),
  });
  t.equal((await callback(fake.callback('SM0123456789abcdef0123456789abcdef', 'delivered'))).statusCode, 200);
  t.equal(await count(app, 'outbox_early'), 1);
  await app.svc.retention.run(Date.now() + 12 * 3600_000);
  t.equal(await count(app, 'outbox_early'), 1, 'kept while it may still be claimed');
  await app.svc.retention.run(Date.now() + 3 * 24 * 3600_000);
  t.equal(await count(app, 'outbox_early'), 0);
});

t.test('email: a bounce kept before the send moves the record and suppresses the address', async (t) => {
  const { app } = await makeApp(t, {
    jobs: { poll_ms: 20 },
    plugins: { email: { default_from: 'Gateway <noreply@example.com>' } },
  });
  const a = await activate(app);
  const box = app.svc.outbox.kind<any, any>('email')!;
  const id = 'em_early0000000000000000';
  const messageId = `<${id}@example.com>`;
  const bounce = { vendor_message_id: messageId, state: 'bounced', recipients: ['ann@example.org'], permanent: true };
  t.equal(await box.early('capture', messageId, bounce), 'kept');
  const input = {
    message_id: messageId,
    idempotency_key: id,
    from: { address: 'noreply@example.com' },
    to: [{ address: 'ann@example.org' }],
    cc: [],
    bcc: [],
    subject: 'early',
    text: 'hi',
    attachments: [],
    headers: {},
  };
  const data = {
    from: 'noreply@example.com',
    to: ['ann@example.org'],
    cc: [],
    bcc: [],
    subject: 'early',
    message_id: messageId,
  };
  await app.svc.db
    .transaction()
    .execute((trx) => box.accept(trx, { id, accountId: a.account_id, input, data, vendor: 'capture' }));
  await until('the email to bounce', async () => (await box.find(a.account_id, id))?.state === 'bounced');
  const sup = await app.inject({ method: 'GET', url: '/v1/email/suppress', headers: a.auth });
  t.match(sup.json(), { items: [{ email: 'ann@example.org', reason: 'bounce' }] });
  t.equal(await count(app, 'outbox_early'), 0);
  // Once the record has the id, a report is applied at once (here a move `bounced` does not allow).
  const late = { vendor_message_id: messageId, state: 'delivered', recipients: [] };
  t.equal(await box.early('capture', messageId, late), 'applied');
  t.equal((await box.find(a.account_id, id))!.state, 'bounced');
  t.equal(await count(app, 'outbox_early'), 0, 'nothing kept');
});
