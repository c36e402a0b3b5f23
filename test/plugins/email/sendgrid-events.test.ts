import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { SENDGRID_KEY, sendgridFake } from '../../fakes/sendgrid-fake.js';
import { webhookApp } from './webhook-app.js';

// The email area on SendGrid (the fake speaking Mail Send and the signed Event Webhook): a send
// goes out with SendGrid's id; a signed bounce moves the record to bounced and suppresses the
// address, a forged one is 401 and changes nothing, a blocked (transient) bounce moves nothing,
// a spam report is a complaint.

t.test('SendGrid events through /v1/email/webhooks/{instance}', async (t) => {
  const fake = await sendgridFake(t);
  const { get, sent, post, suppressed } = await webhookApp(t, {
    id: 'sg',
    use: 'sendgrid',
    config: { api_key: SENDGRID_KEY, base_url: fake.baseUrl, webhook_public_key: fake.publicKey },
  });

  const rec = await sent(['ann@example.org', 'bob@example.org']);
  t.match(rec, { state: 'sent', vendor: 'sg', vendor_message_id: fake.messages[0].id, cost_usd: 0.0008 });
  t.same(fake.messages[0].body.custom_args, { svc_id: rec.id });
  const id = rec.vendor_message_id;

  const events = [
    fake.event(id, 'delivered', 'ann@example.org', { response: '250 OK' }),
    fake.event(id, 'bounce', 'bob@example.org', { type: 'bounce', status: '5.1.1', reason: '550 5.1.1 unknown' }),
  ];
  const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const forged = await post('sg', fake.signed(events, { privateKey: other }));
  t.equal(forged.statusCode, 401, forged.body);
  t.equal(forged.json().error.code, 'unauthenticated');
  t.equal((await get(`/v1/email/${rec.id}`)).state, 'sent', 'unchanged');
  t.same(await suppressed(), {});

  const ok = await post('sg', fake.signed(events));
  t.equal(ok.statusCode, 200, ok.body);
  t.match(await get(`/v1/email/${rec.id}`), { state: 'bounced' });
  t.same(await suppressed(), { 'bob@example.org': 'bounce' }, 'the bounced address, not the delivered one');
  const again = await sent(['bob@example.org']);
  t.equal(again.state, 'suppressed', 'a later send to it is never made');

  const second = await sent(['carl@example.org']);
  const blocked = fake.event(second.vendor_message_id, 'bounce', 'carl@example.org', {
    type: 'blocked',
    reason: 'blocklisted',
  });
  t.equal((await post('sg', fake.signed([blocked]))).statusCode, 200);
  t.equal((await get(`/v1/email/${second.id}`)).state, 'sent', 'a blocked bounce is transient: nothing moves');
  const spam = fake.event(second.vendor_message_id, 'spamreport', 'carl@example.org');
  t.equal((await post('sg', fake.signed([spam]))).statusCode, 200);
  t.equal((await get(`/v1/email/${second.id}`)).state, 'complained');
  t.same(await suppressed(), { 'bob@example.org': 'bounce', 'carl@example.org': 'complaint' });

  const unknown = fake.event('NoSuchMessage0000000000', 'bounce', 'x@example.org', { type: 'bounce' });
  t.equal((await post('sg', fake.signed([unknown]))).statusCode, 200, "another system's message is acknowledged");
});
