// database-independent: the adapter alone against the fake, no gateway
import t from 'tap';
import vonage from '../../../vendors/vonage/index.js';
import { validVonageSignature, vonageSignature } from '../../../vendors/vonage/signature.js';
import { classifyGeneric } from '../../../core/router/failure.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import type { Tap } from '../../helpers/tap.js';
import {
  VONAGE_KEY,
  VONAGE_SECRET,
  VONAGE_SIGNATURE_SECRET,
  vonageFake,
  vonageSign,
  type FakeMethod,
} from '../../fakes/vonage-fake.js';

// Delivery receipts: verified (Vonage's signed webhooks), fresh, then read; the states they map to.

const ctx = vendorContext('vg1');
const opts = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });
const CALLBACKS = 'https://gw.example.com/v1/sms/status';

async function setup(t: Tap, method: FakeMethod = 'sha256', over: Record<string, unknown> = {}) {
  const fake = await vonageFake(t, { method });
  const config = {
    api_key: VONAGE_KEY,
    api_secret: VONAGE_SECRET,
    signature_secret: VONAGE_SIGNATURE_SECRET,
    signature_method: method,
    accept_unsigned_receipts: false,
    receipt_max_age_seconds: 300,
    from: 'Acme',
    base_url: fake.baseUrl,
    segment_price_usd: 0.00809,
    ...over,
  };
  const caps = (await vonage.create(config as any, ctx)).capabilities as Record<string, any>;
  const out = await caps['sms.send'].invoke(
    { to: '+14155550100', body: 'hi', idempotency_key: 'sms_r', status_callback_url: CALLBACKS },
    opts()
  );
  const read = (r: { url: string; headers: Record<string, string>; body: string }) =>
    caps['sms.status'].invoke({ url: r.url, headers: r.headers, body: r.body }, opts());
  const kind = async (r: { url: string; headers: Record<string, string>; body: string }) =>
    classifyGeneric(
      await read(r).then(
        () => undefined,
        (e: unknown) => e
      )
    );
  return { fake, id: out.vendor_message_id as string, read, kind };
}

t.test('our sig is the one Vonage makes, for every method; & and = in values; hex in either case', async (t) => {
  const params = { messageId: '0A01', status: 'delivered', 'message-timestamp': '2026-12-03 06:00:00', x: 'a&b=c ü' };
  for (const m of ['md5hash', 'md5', 'sha1', 'sha256', 'sha512'] as const) {
    const theirs = vonageSign(m, 's3cret', params);
    t.equal(vonageSignature(m, 's3cret', params), theirs.toLowerCase(), m);
    t.ok(validVonageSignature(m, 's3cret', { ...params, sig: theirs }), `${m} as Vonage writes it`);
    t.ok(validVonageSignature(m, 's3cret', { ...params, sig: theirs.toLowerCase() }));
    t.notOk(validVonageSignature(m, 'other', { ...params, sig: theirs }));
    t.notOk(validVonageSignature(m, 's3cret', { ...params, status: 'failed', sig: theirs }));
    t.notOk(validVonageSignature(m, 's3cret', params), 'no sig');
  }
  // md5hash by hand: MD5 of "&k=v…" with the secret appended.
  const { createHash } = await import('node:crypto');
  t.equal(
    vonageSignature('md5hash', 'S', { b: '2', a: 'x=y&z' }),
    createHash('md5').update('&a=x_y_z&b=2S').digest('hex')
  );
});

t.test('signed receipts by GET, POST form and POST-JSON are read', async (t) => {
  for (const method of ['sha256', 'md5hash'] as const) {
    const { fake, id, read } = await setup(t, method);
    for (const as of ['GET', 'POST', 'POST-JSON'] as const)
      t.same(await read(fake.receipt(id, 'delivered', { as })), { vendor_message_id: id, state: 'delivered' }, as);
  }
});

t.test('forged, tampered, unsigned and stale receipts are refused (auth)', async (t) => {
  const { fake, id, kind } = await setup(t);
  t.equal(await kind(fake.receipt(id, 'delivered', { secret: 'a-guessed-secret' })), 'auth', 'forged');
  const r = fake.receipt(id, 'failed', { errCode: '1' });
  t.equal(await kind({ ...r, url: r.url.replace('status=failed', 'status=delivered') }), 'auth', 'tampered');
  const posted = fake.receipt(id, 'failed', { as: 'POST-JSON' });
  t.equal(await kind({ ...posted, body: posted.body.replace('"failed"', '"delivered"') }), 'auth', 'tampered JSON');
  t.equal(await kind(fake.receipt(id, 'delivered', { sign: false })), 'auth', 'unsigned');
  const url = new URL(r.url);
  url.searchParams.delete('sig');
  t.equal(await kind({ ...r, url: url.toString() }), 'auth', 'sig removed');
  const now = Math.floor(Date.now() / 1000);
  t.equal(await kind(fake.receipt(id, 'delivered', { timestamp: now - 301 })), 'auth', 'stale');
  t.equal(await kind(fake.receipt(id, 'delivered', { timestamp: now + 600 })), 'auth', 'from the future');
  const ok = await setup(t);
  t.same(
    await ok.read(ok.fake.receipt(ok.id, 'delivered', { timestamp: now - 200 })),
    {
      vendor_message_id: ok.id,
      state: 'delivered',
    },
    'within the window'
  );
});

t.test("statuses as the record's states; err-code as error_code; another api-key is null", async (t) => {
  const { fake, id, read } = await setup(t);
  const cases: Array<[string, string, object | null]> = [
    ['delivered', '0', { state: 'delivered' }],
    ['expired', '5', { state: 'undelivered', error_code: '5' }],
    ['failed', '2', { state: 'failed', error_code: '2' }],
    ['rejected', '6', { state: 'failed', error_code: '6' }],
    ['accepted', '0', { state: 'sent' }],
    ['buffered', '0', { state: 'sent' }],
    ['unknown', '99', null],
  ];
  for (const [status, errCode, want] of cases)
    t.same(await read(fake.receipt(id, status, { errCode })), want && { vendor_message_id: id, ...want }, status);
  t.equal(await read(fake.receipt(id, 'delivered', { apiKey: 'ffff0000' })), null, "another account's receipt");
});

t.test('without a signature_secret receipts are refused, unless accept_unsigned_receipts', async (t) => {
  const bare = { signature_secret: undefined, signature_method: 'md5hash' };
  const refused = await setup(t, 'md5hash', bare);
  t.equal(await refused.kind(refused.fake.receipt(refused.id, 'delivered', { sign: false })), 'auth');
  t.equal(await refused.kind(refused.fake.receipt(refused.id, 'delivered')), 'auth', 'even one that carries a sig');
  const open = await setup(t, 'md5hash', { ...bare, accept_unsigned_receipts: true });
  t.same(await open.read(open.fake.receipt(open.id, 'delivered', { sign: false, as: 'POST' })), {
    vendor_message_id: open.id,
    state: 'delivered',
  });
  t.equal(await open.read(open.fake.receipt(open.id, 'delivered', { sign: false, apiKey: 'x' })), null);
  const signed = await setup(t, 'sha256', { accept_unsigned_receipts: true });
  t.equal(
    await signed.kind(signed.fake.receipt(signed.id, 'delivered', { sign: false })),
    'auth',
    'with a signature_secret every receipt must be signed'
  );
});
