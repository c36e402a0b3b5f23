// database-independent: the adapter alone against the fake, no gateway
import t from 'tap';
import { createServer, type AddressInfo } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import vonage from '../../../vendors/vonage/index.js';
import { VONAGE_STATUSES, vonageStatusFailure } from '../../../vendors/vonage/wire.js';
import { classifyGeneric, FAILURE_KINDS } from '../../../core/router/failure.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { VONAGE_KEY, VONAGE_SECRET, VONAGE_SIGNATURE_SECRET, vonageFake } from '../../fakes/vonage-fake.js';

const ctx = vendorContext('vg1');
const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });
const CALLBACKS = 'https://gw.example.com/v1/sms/status';

async function adapter(baseUrl: string, over: Record<string, unknown> = {}) {
  const config = {
    api_key: VONAGE_KEY,
    api_secret: VONAGE_SECRET,
    signature_method: 'md5hash',
    accept_unsigned_receipts: false,
    receipt_max_age_seconds: 300,
    from: '+15005550006',
    base_url: baseUrl,
    segment_price_usd: 0.00809,
    ...over,
  };
  return (await vonage.create(config as any, ctx)).capabilities as Record<string, any>;
}

const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error
  );

t.test('a send is one form POST: key and secret, numbers without +, client-ref and callback', async (t) => {
  const fake = await vonageFake(t);
  const caps = await adapter(fake.baseUrl);
  const input = { to: '+14155550100', body: 'Hello & = you', idempotency_key: 'sms_x', status_callback_url: CALLBACKS };
  const out = await caps['sms.send'].invoke(input, opts());
  const msg = fake.messages[0];
  t.same(out, { vendor_message_id: msg.id, segments: 1 });
  t.same(msg.params, {
    api_key: VONAGE_KEY,
    api_secret: VONAGE_SECRET,
    from: '15005550006',
    to: '14155550100',
    text: 'Hello & = you',
    'client-ref': 'sms_x',
    callback: `${CALLBACKS}/vg1`,
  });
  t.equal(caps['sms.send'].price(input, out), 8090, 'priced per part');
  await caps['sms.send'].invoke({ to: '+14155550100', body: 'x', from: 'Acme', idempotency_key: 'sms_y' }, opts());
  t.match(fake.messages[1], { from: 'Acme', callback: null }, 'an alphanumeric sender as it is; no callback asked');
});

t.test('UCS-2 bodies go as type=unicode; a long one in parts: the first id, message-count', async (t) => {
  const fake = await vonageFake(t);
  const caps = await adapter(fake.baseUrl);
  const gsm = await caps['sms.send'].invoke({ to: '+14155550100', body: '€'.repeat(81), idempotency_key: 'a' }, opts());
  t.equal(fake.messages[0].type, 'text', 'the GSM extension table needs no unicode');
  t.same(gsm, { vendor_message_id: fake.messages[0].ids[0], segments: 2 });
  const body = `${'ж'.repeat(100)}😀`;
  const out = await caps['sms.send'].invoke({ to: '+14155550100', body, idempotency_key: 'b' }, opts());
  t.equal(fake.messages[1].params.type, 'unicode');
  t.equal(fake.messages[1].ids.length, 2);
  t.same(out, { vendor_message_id: fake.messages[1].ids[0], segments: 2 });
  t.equal(
    caps['sms.send'].price({ to: '+14155550100', body, idempotency_key: 'b' }),
    2 * 8090,
    'estimated as carriers count'
  );
});

for (const method of ['md5hash', 'md5', 'sha1', 'sha256', 'sha512'] as const)
  t.test(`signed sends (${method}): sig and timestamp instead of api_secret`, async (t) => {
    const fake = await vonageFake(t, { method });
    const signed = { api_secret: undefined, signature_secret: VONAGE_SIGNATURE_SECRET, signature_method: method };
    const caps = await adapter(fake.baseUrl, signed);
    await caps['sms.send'].invoke({ to: '+14155550100', body: 'signed & sealed', idempotency_key: 'sms_s' }, opts());
    const p = fake.messages[0].params;
    t.ok(fake.messages[0].signed);
    t.notOk('api_secret' in p, 'the API secret never travels');
    t.match(p, { api_key: VONAGE_KEY, timestamp: /^\d{10}$/, sig: /^[0-9a-f]+$/ });
    const wrong = await adapter(fake.baseUrl, { ...signed, signature_secret: 'a-guess' });
    const e = await failureOf(
      wrong['sms.send'].invoke({ to: '+14155550100', body: 'x', idempotency_key: 'z' }, opts())
    );
    t.equal(classifyGeneric(e), 'auth', e?.message);
    t.match(e?.message, /status 14/);
    t.equal(fake.messages.length, 1, 'a forged signature sends nothing');
  });

t.test("statuses other than 0 as failure kinds, the table's every entry a kind", async (t) => {
  const fake = await vonageFake(t);
  const caps = await adapter(fake.baseUrl);
  const send = () =>
    failureOf(caps['sms.send'].invoke({ to: '+14155550100', body: 'hi', idempotency_key: 'f' }, opts()));
  const expected: Record<string, string> = {
    '1': 'rate_limited',
    '2': 'client_error',
    '3': 'client_error',
    '4': 'auth',
    '5': 'not_sent',
    '7': 'client_error',
    '9': 'quota',
    '29': 'client_error',
  };
  fake.failNext(...Object.keys(expected));
  for (const [status, kind] of Object.entries(expected)) {
    const e = await send();
    t.equal(classifyGeneric(e), kind, `${status}: ${e?.message}`);
    t.match(e?.message, `status ${status}`);
  }
  t.equal(fake.messages.length, 0, 'nothing was sent');
  for (const [status, { kind }] of Object.entries(VONAGE_STATUSES))
    t.ok(FAILURE_KINDS.includes(kind) && status !== '0', `${status} → ${kind}`);
  t.equal(vonageStatusFailure({ status: '99' }).kind, 'client_error', 'an undocumented status is final, never resent');
  fake.failNext('partial');
  const partial = await failureOf(
    caps['sms.send'].invoke({ to: '+14155550100', body: 'a'.repeat(200), idempotency_key: 'p' }, opts())
  );
  t.equal(classifyGeneric(partial), 'unavailable', 'part of it went out: never resent');
  t.match(partial?.message, /sent 1 of 2 parts/);
});

t.test('bad credentials, bad numbers, no sender, nothing listening, a proxy 503', async (t) => {
  const fake = await vonageFake(t);
  const wrong = await adapter(fake.baseUrl, { api_secret: 'nope' });
  const input = { to: '+14155550100', body: 'hi', idempotency_key: 'z' };
  t.equal(classifyGeneric(await failureOf(wrong['sms.send'].invoke(input, opts()))), 'auth');
  const noFrom = await adapter(fake.baseUrl, { from: undefined });
  t.equal(classifyGeneric(await failureOf(noFrom['sms.send'].invoke(input, opts()))), 'client_error');
  const caps = await adapter(fake.baseUrl);
  const bad = await failureOf(caps['sms.send'].invoke({ ...input, to: '+1' }, opts()));
  t.equal(classifyGeneric(bad), 'client_error', bad?.message);
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const { port } = closed.address() as AddressInfo;
  await new Promise((r) => closed.close(r));
  const down = await adapter(`http://127.0.0.1:${port}`);
  t.equal(classifyGeneric(await failureOf(down['sms.send'].invoke(input, opts()))), 'not_sent');
  const proxy = createHttpServer((_req, res) => res.writeHead(503, { 'retry-after': '7' }).end('upstream down'));
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => proxy.close(r)));
  const behind = await adapter(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
  const e = (await failureOf(behind['sms.send'].invoke(input, opts()))) as any;
  t.equal(classifyGeneric(e), 'unavailable', 'a 5xx may follow acceptance');
  t.equal(e.retryAfterMs, 7000);
  t.equal(fake.messages.length, 0);
  await t.rejects(adapter(fake.baseUrl, { api_secret: undefined }), /api_secret or a signature_secret/);
});
