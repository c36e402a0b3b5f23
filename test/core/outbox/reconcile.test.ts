import t from 'tap';
import { TWILIO_ERRORS } from '../../fakes/twilio-fake.js';
import { balance, get, untilState } from '../../plugins/sms/sms-app.js';
import { shiftedClock } from '../../helpers/clock.js';
import { until } from '../../helpers/wait.js';
import { crashedMidCall, FROM, sendDirect, smsInput, twilioApp } from './twilio-app.js';

// A node that died between Twilio's answer and its commit: the job asks Twilio's message list
// (`sms.find`) before anything is resent. Found: sent with that sid, charged once, no second
// message. Not found: sent again. A lookup that fails is asked again later, never guessed.

const TO = '+14155550123';

t.test('found at twilio: sent with its sid and charged once; nothing is sent again', async (t) => {
  const { app, a, fake } = await twilioApp(t);
  const start = await balance(app, a);
  const input = smsInput(TO, 'Your order has shipped.');
  const at = Date.now();
  const taken = await sendDirect(app, input);
  const id = await crashedMidCall(app, a.account_id, input, at);
  const sent = await untilState(app, a, id, 'sent');
  t.match(sent, { vendor: 'tw', error: null, segments: 1, cost_usd: 0.0083 });
  const row = await app.svc.outbox.kind('sms')!.find(a.account_id, id);
  t.equal(row!.vendorMessageId, taken.vendor_message_id, 'the sid twilio gave the lost attempt');
  t.equal(row!.attempts, 1, 'no second attempt');
  t.equal(fake.messages.length, 1, 'not sent again');
  t.equal(Math.round((start - (await balance(app, a))) * 1e6), 8300, 'charged once, as a send');
  const q = fake.lists[0];
  t.equal(q.get('To'), TO);
  t.equal(q.get('From'), FROM);
  t.equal(q.get('DateSent>'), null, 'no DateSent filter: it would leave out a message Twilio still queues');
});

t.test('found while twilio still queues it (no date sent): not sent again', async (t) => {
  const { app, a, fake } = await twilioApp(t);
  const input = smsInput(TO, 'Your table is ready.');
  const at = Date.now();
  const taken = await sendDirect(app, input);
  fake.messages.at(-1)!.queued = true;
  const id = await crashedMidCall(app, a.account_id, input, at);
  await untilState(app, a, id, 'sent');
  const row = await app.svc.outbox.kind('sms')!.find(a.account_id, id);
  t.equal(row!.vendorMessageId, taken.vendor_message_id, 'the queued message is the lost attempt');
  t.equal(fake.messages.length, 1, 'not sent again');
});

t.test('not at twilio: sent again (the lookup said it never arrived)', async (t) => {
  const { app, a, fake } = await twilioApp(t);
  const input = smsInput(TO, 'Second try.');
  // Same number and sender, another text, and the same text from before the attempt started.
  await sendDirect(app, { ...input, body: 'Something else.' });
  await sendDirect(app, input);
  fake.messages.at(-1)!.createdAt = new Date(Date.now() - 10 * 60_000);
  const id = await crashedMidCall(app, a.account_id, input, Date.now());
  const sent = await untilState(app, a, id, 'sent');
  t.equal(fake.lists.length, 1, 'asked once');
  t.equal(fake.messages.length, 3, 'sent now');
  const row = await app.svc.outbox.kind('sms')!.find(a.account_id, id);
  t.equal(row!.vendorMessageId, fake.messages[2].sid);
  t.equal(row!.attempts, 2);
  t.equal(sent.vendor, 'tw');
});

t.test('found on a later page of the list (next_page_uri)', async (t) => {
  const { app, a, fake } = await twilioApp(t);
  const input = smsInput(TO, 'Page two.');
  const at = Date.now();
  const taken = await sendDirect(app, input);
  // 150 newer messages to the number: the one sought is on the second page of 100.
  for (let i = 0; i < 150; i++)
    fake.messages.push({
      ...fake.messages[0],
      sid: `SM${String(i).padStart(32, '0')}`,
      body: `other ${i}`,
      createdAt: new Date(Date.now() + 1000 + i),
    });
  const id = await crashedMidCall(app, a.account_id, input, at);
  await untilState(app, a, id, 'sent');
  t.equal((await app.svc.outbox.kind('sms')!.find(a.account_id, id))!.vendorMessageId, taken.vendor_message_id);
  t.equal(fake.lists.length, 2, 'two pages read');
  t.equal(fake.lists[1].get('Page'), '1');
});

t.test('a lookup that fails is asked again later; the attempt stays open meanwhile', async (t) => {
  const clock = shiftedClock(t);
  const { app, a, fake } = await twilioApp(t);
  const input = smsInput(TO, 'Ask again.');
  const at = Date.now();
  await sendDirect(app, input);
  fake.failNext(TWILIO_ERRORS.internal);
  const id = await crashedMidCall(app, a.account_id, input, at);
  await until('the lookup to fail', async () => {
    const job = await app.svc.db.selectFrom('jobs').selectAll().where('job_id', '=', id).executeTakeFirstOrThrow();
    return job.state === 'queued' && Number(job.attempts) === 1;
  });
  const between = await app.svc.db
    .selectFrom('outbox_records')
    .selectAll()
    .where('record_id', '=', id)
    .executeTakeFirstOrThrow();
  t.equal(between.state, 'queued');
  t.ok(between.attempt_open, 'still open');
  const job = await app.svc.db.selectFrom('jobs').selectAll().where('job_id', '=', id).executeTakeFirstOrThrow();
  clock.advance(Number(job.run_at) - Date.now() + 1);
  app.svc.jobs.wake('outbox.send.sms');
  await untilState(app, a, id, 'sent');
  t.equal(fake.messages.length, 1, 'never sent twice');
  t.equal(fake.lists.length, 1, 'the list read that answered (the first was the 500)');
});

t.test("a match another record already owns is not this one's: outcome_unknown, nothing sent", async (t) => {
  const { app, a, fake } = await twilioApp(t);
  const first = (
    await app.inject({ method: 'POST', url: '/v1/sms/send', headers: a.auth, payload: { to: TO, body: 'Twice.' } })
  ).json();
  await untilState(app, a, first.sms_id, 'sent');
  const input = smsInput(TO, 'Twice.');
  const id = await crashedMidCall(app, a.account_id, input, Date.now());
  const failed = await untilState(app, a, id, 'failed');
  t.equal(failed.error.code, 'outcome_unknown');
  t.match(failed.error.message, /belongs to another record/);
  t.equal(fake.messages.length, 1);
  t.equal((await get(app, a, `/v1/sms/${first.sms_id}`)).json().state, 'sent', 'the other record untouched');
});
