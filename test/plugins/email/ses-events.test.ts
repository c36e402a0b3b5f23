import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { SES_KEY_ID, SES_SECRET, sesFake, TOPIC } from '../../fakes/ses-fake.js';
import { webhookApp } from './webhook-app.js';

// The email area on Amazon SES (the fake speaking SES v2 and SNS over HTTPS): the SNS
// subscription is confirmed, a send goes out as a raw message with SES's MessageId, a signed
// bounce notification moves the record to bounced and suppresses the address, a forged one is
// 401 and changes nothing, a complaint suppresses too.

t.test('SES notifications through /v1/email/webhooks/{instance}', async (t) => {
  const fake = await sesFake(t);
  const { get, sent, post, suppressed } = await webhookApp(t, {
    id: 'ses',
    use: 'ses',
    config: {
      region: 'eu-west-1',
      access_key_id: SES_KEY_ID,
      secret_access_key: SES_SECRET,
      endpoint: fake.endpoint,
      sns_topic_arns: [TOPIC],
      sns_cert_host: fake.snsHost,
      ca: fake.ca,
    },
  });

  const sub = await post('ses', fake.subscription());
  t.equal(sub.statusCode, 200, sub.body);
  t.equal(fake.confirmations.length, 1, 'the subscription is confirmed');

  const rec = await sent(['ann@example.org', 'bob@example.org']);
  t.match(rec, { state: 'sent', vendor: 'ses', vendor_message_id: fake.sent[0].id, cost_usd: 0.0002 });
  t.match(fake.sent[0].raw, `Message-ID: ${rec.message_id}`);
  const id = rec.vendor_message_id;

  const forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    format: 'pem',
    type: 'pkcs8',
  });
  const forged = await post(
    'ses',
    fake.notification(id, 'Bounce', ['bob@example.org'], {}, { key: forger.toString() })
  );
  t.equal(forged.statusCode, 401, forged.body);
  t.equal((await get(`/v1/email/${rec.id}`)).state, 'sent', 'unchanged');
  t.same(await suppressed(), {});

  const bounce = await post('ses', fake.notification(id, 'Bounce', ['bob@example.org']));
  t.equal(bounce.statusCode, 200, bounce.body);
  t.match(await get(`/v1/email/${rec.id}`), { state: 'bounced' });
  t.same(await suppressed(), { 'bob@example.org': 'bounce' });
  t.equal((await sent(['bob@example.org'])).state, 'suppressed', 'a later send to it is never made');

  const second = await sent(['carl@example.org']);
  const soft = fake.notification(second.vendor_message_id, 'Bounce', ['carl@example.org'], { bounceType: 'Transient' });
  t.equal((await post('ses', soft)).statusCode, 200);
  t.equal((await get(`/v1/email/${second.id}`)).state, 'sent', 'a transient bounce moves nothing');
  t.equal(
    (await post('ses', fake.notification(second.vendor_message_id, 'Complaint', ['carl@example.org']))).statusCode,
    200
  );
  t.equal((await get(`/v1/email/${second.id}`)).state, 'complained');
  t.same(await suppressed(), { 'bob@example.org': 'bounce', 'carl@example.org': 'complaint' });
  t.equal(fake.certFetches.length, 1, 'one certificate fetch for every message');
});
