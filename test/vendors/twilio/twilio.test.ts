// database-independent: the adapter alone against the fake, no gateway
import t from 'tap';
import { createServer, type AddressInfo } from 'node:net';
import twilioSdk from 'twilio';
import twilio from '../../../vendors/twilio/index.js';
import { twilioSignature, validTwilioSignature } from '../../../vendors/twilio/wire.js';
import { classifyGeneric } from '../../../core/router/failure.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { TWILIO_ERRORS, TWILIO_SID, TWILIO_TOKEN, twilioFake } from '../../fakes/twilio-fake.js';

const ctx = vendorContext('tw1');
const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });
const CALLBACKS = 'https://gw.example.com/v1/sms/status';

async function adapter(baseUrl: string, over: Record<string, unknown> = {}) {
  const config = {
    account_sid: TWILIO_SID,
    auth_token: TWILIO_TOKEN,
    from: '+15005550006',
    base_url: baseUrl,
    segment_price_usd: 0.0083,
    ...over,
  };
  return (await twilio.create(config as any, ctx)).capabilities as Record<string, any>;
}

t.test("a send is one form POST with Basic auth; the sid and Twilio's segment count come back", async (t) => {
  const fake = await twilioFake(t);
  const caps = await adapter(fake.baseUrl);
  const input = {
    to: '+14155550100',
    body: `${'€'.repeat(81)}`,
    idempotency_key: 'sms_x',
    status_callback_url: CALLBACKS,
  };
  const out = await caps['sms.send'].invoke(input, opts());
  t.match(out.vendor_message_id, /^SM[0-9a-f]{32}$/);
  t.equal(out.segments, 2);
  t.equal(caps['sms.send'].price(input, out), 2 * 8300, 'priced per segment');
  t.equal(caps['sms.send'].price(input), 2 * 8300, 'the estimate counts segments as carriers do');
  t.same(fake.messages[0].params, {
    To: '+14155550100',
    Body: input.body,
    From: '+15005550006',
    StatusCallback: `${CALLBACKS}/tw1`,
  });
});

t.test('failures classified: Twilio refusals are not_sent, bad numbers client_error, bad creds auth', async (t) => {
  const fake = await twilioFake(t);
  const caps = await adapter(fake.baseUrl);
  const send = () => caps['sms.send'].invoke({ to: '+14155550100', body: 'hi', idempotency_key: 'sms_y' }, opts());
  fake.failNext(TWILIO_ERRORS.tooMany, TWILIO_ERRORS.internal, TWILIO_ERRORS.invalidTo, TWILIO_ERRORS.unsubscribed);
  for (const kind of ['not_sent', 'not_sent', 'client_error', 'client_error']) {
    const e = await send().catch((e: unknown) => e);
    t.equal(classifyGeneric(e), kind, (e as Error).message);
  }
  const wrong = await adapter(fake.baseUrl, { auth_token: 'nope' });
  const e = await wrong['sms.send']
    .invoke({ to: '+14155550100', body: 'hi', idempotency_key: 'z' }, opts())
    .catch((e: unknown) => e);
  t.equal(classifyGeneric(e), 'auth');
  // A port just closed: connection refused (fetch refuses port 1 itself, as unsafe).
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const { port } = closed.address() as AddressInfo;
  await new Promise((r) => closed.close(r));
  const down = await adapter(`http://127.0.0.1:${port}`);
  const d = await down['sms.send']
    .invoke({ to: '+14155550100', body: 'hi', idempotency_key: 'z' }, opts())
    .catch((e: unknown) => e);
  t.equal(classifyGeneric(d), 'not_sent', 'connection refused: nothing left');
  const noFrom = await adapter(fake.baseUrl, { from: undefined });
  const n = await noFrom['sms.send']
    .invoke({ to: '+14155550100', body: 'hi', idempotency_key: 'z' }, opts())
    .catch((e: unknown) => e);
  t.equal(classifyGeneric(n), 'client_error');
  t.equal(fake.messages.length, 0, 'nothing was sent');
});

t.test('X-Twilio-Signature as the twilio package computes and validates it', async (t) => {
  const url = 'https://gw.example.com/v1/sms/status/tw1?x=1';
  const params = { MessageSid: 'SM1', MessageStatus: 'delivered', AccountSid: TWILIO_SID, ErrorCode: '', B: 'ä &=' };
  const form = new URLSearchParams(params);
  const ours = twilioSignature(TWILIO_TOKEN, url, form);
  t.equal(ours, twilioSdk.getExpectedTwilioSignature(TWILIO_TOKEN, url, params));
  t.ok(twilioSdk.validateRequest(TWILIO_TOKEN, ours, url, params));
  t.ok(validTwilioSignature(TWILIO_TOKEN, url, form, ours));
  t.notOk(validTwilioSignature('other', url, form, ours));
  t.notOk(validTwilioSignature(TWILIO_TOKEN, `${url}2`, form, ours));
  t.notOk(validTwilioSignature(TWILIO_TOKEN, url, form, ''));
});

t.test('status callbacks: verified, then read; forged ones throw auth', async (t) => {
  const fake = await twilioFake(t);
  const caps = await adapter(fake.baseUrl);
  const out = await caps['sms.send'].invoke(
    { to: '+14155550100', body: 'hi', idempotency_key: 'sms_c', status_callback_url: CALLBACKS },
    opts()
  );
  const read = (cb: { url: string; body: string; headers: Record<string, string> }) =>
    caps['sms.status'].invoke(cb, opts());
  t.same(await read(fake.callback(out.vendor_message_id, 'delivered')), {
    vendor_message_id: out.vendor_message_id,
    state: 'delivered',
  });
  t.same(await read(fake.callback(out.vendor_message_id, 'undelivered', { ErrorCode: '30003' })), {
    vendor_message_id: out.vendor_message_id,
    state: 'undelivered',
    error_code: '30003',
  });
  t.equal(await read(fake.callback(out.vendor_message_id, 'sending')), null, 'an in-between status moves nothing');
  const forged = fake.callback(out.vendor_message_id, 'delivered', {}, 'not-the-token');
  t.equal(classifyGeneric(await read(forged).catch((e: unknown) => e)), 'auth');
  const cb = fake.callback(out.vendor_message_id, 'delivered');
  const tampered = { ...cb, body: cb.body.replace('delivered', 'failed') };
  t.equal(classifyGeneric(await read(tampered).catch((e: unknown) => e)), 'auth');
  t.equal(classifyGeneric(await read({ ...cb, headers: {} }).catch((e: unknown) => e)), 'auth');
});
