import t from 'tap';
import { TWILIO_ERRORS } from '../../fakes/twilio-fake.js';
import { balance, post, untilState } from '../../plugins/sms/sms-app.js';
import { receiver, verify } from '../../plugins/scheduling/receiver.js';
import { count } from './outbox-app.js';
import { twilioApp } from './twilio-app.js';

// A recipient the vendor refuses for good (Twilio 21211, 21610, 21612, 21614…): the record ends
// `rejected` with the vendor's code, uncharged, its hold given back, `sms.rejected` pushed; not
// retried. Another client error stays `failed`.

for (const [name, err] of [
  ['unsubscribed (STOP)', TWILIO_ERRORS.unsubscribed],
  ['not a mobile number', TWILIO_ERRORS.notMobile],
  ['not reachable by SMS', TWILIO_ERRORS.unreachable],
] as const) {
  t.test(`twilio ${err.code}, ${name}: rejected with the code, uncharged, its event pushed`, async (t) => {
    const { app, a, fake } = await twilioApp(t);
    const rx = await receiver(t);
    const ep = await post(app, a, '/v1/events/endpoints', { url: rx.url, event_types: ['sms.rejected'] });
    const start = await balance(app, a);
    fake.failNext(err);
    const r = (await post(app, a, '/v1/sms/send', { to: '+14155550199', body: 'refused' })).json();
    const rejected = await untilState(app, a, r.sms_id, 'rejected');
    t.match(rejected, {
      cost_usd: 0,
      vendor: null,
      error: { code: String(err.code), message: /refused the recipient/ },
    });
    t.equal(await balance(app, a), start, 'the hold was released');
    t.equal(await count(app, 'wallet_holds', [['account_id', a.account_id]]), 0);
    t.equal(fake.messages.length, 0);
    await rx.waitFor(1);
    const ev = verify(ep.json().secret, rx.hits[0]) as any;
    t.match(ev, {
      type: 'sms.rejected',
      data: { sms_id: r.sms_id, state: 'rejected', error: { code: String(err.code) } },
    });
    const job = await app.svc.db
      .selectFrom('jobs')
      .selectAll()
      .where('job_id', '=', r.sms_id)
      .executeTakeFirstOrThrow();
    t.equal(Number(job.attempts), 1, 'not retried');
  });
}

t.test('a client error that is not about the recipient stays failed', async (t) => {
  const { app, a, fake } = await twilioApp(t);
  fake.failNext({
    code: 21606,
    message: "The 'From' phone number provided is not a valid message-capable number",
    more_info: 'https://www.twilio.com/docs/errors/21606',
    status: 400,
  } as any);
  const r = (await post(app, a, '/v1/sms/send', { to: '+14155550199', body: 'bad sender' })).json();
  const failed = await untilState(app, a, r.sms_id, 'failed');
  t.equal(failed.error.code, 'unprocessable');
  t.match(failed.error.message, /21606/);
});
