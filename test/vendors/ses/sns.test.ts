// database-independent: the adapter's email.events against the fake SNS (HTTPS, openssl's certificate)
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { classifyGeneric } from '../../../core/router/failure.js';
import { canonicalString } from '../../../vendors/ses/sns.js';
import { sesFake } from '../../fakes/ses-fake.js';
import { opts, sesAdapter } from './ses-app.js';

const URL_ = 'https://gw.example.com/v1/email/webhooks/ses1';
const ID = '0100018c9f2a1b3c-5e8d2f61-7a4b-4c1e-9d3f-2b6a8c0e1f47-000000';
type Post = { body: string; headers: Record<string, string> };

async function setup(t: any, over: Record<string, unknown> = {}) {
  const fake = await sesFake(t);
  const { caps } = await sesAdapter(t, fake, over);
  const read = (p: Post) => caps['email.events'].invoke({ url: URL_, ...p }, opts());
  const outcome = (p: Post) =>
    read(p).then(
      () => 'accepted',
      (e: unknown) => classifyGeneric(e)
    );
  return { fake, read, outcome };
}

t.test('notifications verified (SignatureVersion 1 and 2), read, the certificate fetched once', async (t) => {
  const { fake, read } = await setup(t);
  t.same(await read(fake.notification(ID, 'Bounce', ['ann@example.org', 'bob@example.org'])), [
    {
      vendor_message_id: ID,
      state: 'bounced',
      recipients: ['ann@example.org', 'bob@example.org'],
      permanent: true,
      detail: 'smtp; 550 5.1.1 user unknown',
    },
  ]);
  t.same(
    await read(fake.notification(ID, 'Bounce', ['ann@example.org'], { bounceType: 'Transient' }, { version: '2' })),
    [
      {
        vendor_message_id: ID,
        state: 'bounced',
        recipients: ['ann@example.org'],
        permanent: false,
        detail: 'smtp; 550 5.1.1 user unknown',
      },
    ]
  );
  t.match(await read(fake.notification(ID, 'Bounce', ['a@example.org'], { bounceType: 'Undetermined' })), [
    { permanent: false },
  ]);
  t.same(
    await read(fake.notification(ID, 'Complaint', ['ann@example.org'], {}, { subject: 'Amazon SES Email Event' })),
    [{ vendor_message_id: ID, state: 'complained', recipients: ['ann@example.org'], detail: 'abuse' }]
  );
  t.same(await read(fake.notification(ID, 'Delivery', ['ann@example.org'])), [
    {
      vendor_message_id: ID,
      state: 'delivered',
      recipients: ['ann@example.org'],
      detail: '250 2.6.0 Message received',
    },
  ]);
  // A configuration set's event destination names the type `eventType`.
  const evt = fake.signed({
    Type: 'Notification',
    Message: JSON.stringify({
      eventType: 'Complaint',
      mail: { messageId: ID },
      complaint: { complainedRecipients: [{ emailAddress: 'x@example.org' }] },
    }),
  });
  t.match(await read(evt), [{ state: 'complained', recipients: ['x@example.org'] }]);
  const other = fake.signed({
    Type: 'Notification',
    Message: JSON.stringify({ eventType: 'Send', mail: { messageId: ID } }),
  });
  t.same(await read(other), [], 'a Send event moves nothing');
  t.equal(fake.certFetches.length, 1, 'the certificate is fetched once and kept');
});

t.test('refused as auth: forged, tampered, stale, another topic, a certificate off the SNS host', async (t) => {
  const { fake, outcome } = await setup(t);
  const forger = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();
  t.equal(
    await outcome(fake.notification(ID, 'Bounce', ['a@example.org'], {}, { key: forger })),
    'auth',
    'another key'
  );
  const good = fake.notification(ID, 'Delivery', ['a@example.org']);
  t.equal(await outcome({ ...good, body: good.body.replace('Delivery', 'Bounce') }), 'auth', 'tampered');
  const m = JSON.parse(good.body);
  t.equal(await outcome({ ...good, body: JSON.stringify({ ...m, SignatureVersion: '3' }) }), 'auth', 'unknown version');
  const old = new Date(Date.now() - 2 * 3600_000);
  t.equal(
    await outcome(fake.notification(ID, 'Bounce', ['a@example.org'], {}, { timestamp: old })),
    'auth',
    'two hours old'
  );
  const recent = new Date(Date.now() - 30 * 60_000);
  t.equal(
    await outcome(fake.notification(ID, 'Bounce', ['a@example.org'], {}, { timestamp: recent })),
    'accepted',
    'half an hour old: a retry'
  );
  const foreign = 'arn:aws:sns:eu-west-1:999999999999:someone-elses';
  t.equal(
    await outcome(fake.notification(ID, 'Bounce', ['a@example.org'], {}, { topic: foreign })),
    'auth',
    'a topic not configured'
  );
  const fetched = fake.certFetches.length;
  for (const certUrl of [
    `http://${fake.snsHost}/SimpleNotificationService-x.pem`,
    'https://sns.eu-west-1.amazonaws.com.evil.example/SimpleNotificationService-x.pem',
    'https://127.0.0.1:1/SimpleNotificationService-x.pem',
    `https://${fake.snsHost}/not-a-certificate`,
    `https://user@${fake.snsHost}/SimpleNotificationService-x.pem`,
  ])
    t.equal(await outcome(fake.notification(ID, 'Bounce', ['a@example.org'], {}, { certUrl })), 'auth', certUrl);
  t.equal(fake.certFetches.length, fetched, 'no certificate fetched from anywhere else');
  t.equal(await outcome({ body: 'not json', headers: {} }), 'auth');
  t.equal(await outcome({ body: JSON.stringify({ Type: 'Notification' }), headers: {} }), 'auth', 'fields missing');
});

t.test('a SubscriptionConfirmation verified is confirmed once (GET SubscribeURL); a forged one never', async (t) => {
  const { fake, read, outcome } = await setup(t);
  const forger = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();
  t.equal(await outcome(fake.subscription({ key: forger })), 'auth');
  t.equal(await outcome(fake.subscription({ topic: 'arn:aws:sns:eu-west-1:999999999999:other' })), 'auth');
  t.same(fake.confirmations, [], 'nothing confirmed');
  const sub = fake.subscription();
  t.same(await read(sub), []);
  t.same(await read(sub), [], 'SNS posting it again');
  t.equal(fake.confirmations.length, 1, 'confirmed once');
  const offHost = fake.signed({
    Type: 'SubscriptionConfirmation',
    Token: 'k',
    Message: 'confirm',
    SubscribeURL: `https://sns.eu-west-1.amazonaws.com.evil.example/?Action=ConfirmSubscription&Token=k`,
  });
  t.equal(await outcome(offHost), 'auth', 'a SubscribeURL off the SNS host is never fetched');
  t.same(await read(fake.subscription({ version: '2' })), []);
  t.equal(fake.confirmations.length, 2);
});

t.test("SNS's canonical string: the fields present, in order, a line each", async (t) => {
  const base = {
    MessageId: 'm',
    TopicArn: 'arn',
    Message: 'x',
    Timestamp: 'ts',
    SignatureVersion: '1',
    Signature: '',
    SigningCertURL: '',
  };
  t.equal(
    canonicalString({ ...base, Type: 'Notification' }),
    'Message\nx\nMessageId\nm\nTimestamp\nts\nTopicArn\narn\nType\nNotification\n'
  );
  t.equal(
    canonicalString({ ...base, Type: 'Notification', Subject: 's' }),
    'Message\nx\nMessageId\nm\nSubject\ns\nTimestamp\nts\nTopicArn\narn\nType\nNotification\n'
  );
  t.equal(
    canonicalString({ ...base, Type: 'SubscriptionConfirmation', SubscribeURL: 'u', Token: 'k' }),
    'Message\nx\nMessageId\nm\nSubscribeURL\nu\nTimestamp\nts\nToken\nk\nTopicArn\narn\nType\nSubscriptionConfirmation\n'
  );
});
