// database-independent: the three siteverify adapters alone against the loopback fake, no gateway
import t from 'tap';
import turnstile from '../../../vendors/turnstile/index.js';
import hcaptcha from '../../../vendors/hcaptcha/index.js';
import recaptcha from '../../../vendors/recaptcha/index.js';
import { hostnameAllowed, type VendorFailure } from '../../../core/kit/vendor.js';
import { vendorContext } from '../../helpers/vendor-context.js';
import { CAPTCHA_SECRETS, captchaFake } from '../../fakes/captcha-fake.js';

const DEFS = { turnstile, hcaptcha, recaptcha } as const;
const opts = (signal = new AbortController().signal) => ({ signal, deadline: Date.now() + 30_000 });

async function verifier(vendor: keyof typeof DEFS, baseUrl: string, over: Record<string, unknown> = {}) {
  const config = { secret_key: CAPTCHA_SECRETS[vendor], base_url: baseUrl, ...over };
  const checked = (await import('@sinclair/typebox/value')).Value.Default(DEFS[vendor].configSchema, config);
  const inst = await DEFS[vendor].create(checked as any, vendorContext(vendor));
  return (inst.capabilities as Record<string, any>)['captcha.verify'];
}

t.test('each vendor: a good token is valid once, its hostname and action reported; the wire is a form', async (t) => {
  const fake = await captchaFake(t);
  for (const vendor of ['turnstile', 'hcaptcha', 'recaptcha'] as const) {
    const v = await verifier(vendor, fake.baseUrl, vendor === 'recaptcha' ? { version: 'v2' } : {});
    const token = fake.issue({ vendor, hostname: 'shop.example.com', action: 'login' });
    const out = await v.invoke({ token, remote_ip: '203.0.113.9' }, opts());
    t.equal(out.valid, true, vendor);
    t.equal(out.hostname, 'shop.example.com');
    t.equal(out.action, 'login');
    const call = fake.calls.at(-1)!;
    t.equal(call.contentType, 'application/x-www-form-urlencoded', `${vendor} gets a form`);
    t.same(call.fields, { secret: CAPTCHA_SECRETS[vendor], response: token, remoteip: '203.0.113.9' });
    const again = await v.invoke({ token }, opts());
    t.same([again.valid, again.reason, again.error_codes], [false, 'vendor_rejected', ['timeout-or-duplicate']]);
  }
});

t.test('a secret from the site key wins over the instance; none at all is an auth failure', async (t) => {
  const fake = await captchaFake(t);
  const v = await verifier('turnstile', fake.baseUrl, { secret_key: undefined });
  const token = fake.issue({ vendor: 'turnstile', hostname: 'a.example', secret: 'account-own-secret' });
  const e = (await v.invoke({ token }, opts()).catch((x: unknown) => x)) as VendorFailure;
  t.equal(e.kind, 'auth');
  t.equal(fake.calls.length, 0, 'nothing sent without a secret');
  t.equal((await v.invoke({ token, secret: 'account-own-secret' }, opts())).valid, true);
  const wrong = await verifier('turnstile', fake.baseUrl);
  const t2 = fake.issue({ vendor: 'turnstile', hostname: 'a.example', secret: 'account-own-secret' });
  t.same((await wrong.invoke({ token: t2 }, opts())).error_codes, ['invalid-input-secret']);
});

t.test('hostname and action checked when expected; wildcards match subdomains only', async (t) => {
  const fake = await captchaFake(t);
  const v = await verifier('turnstile', fake.baseUrl);
  const tok = (hostname: string, action?: string) => fake.issue({ vendor: 'turnstile', hostname, action });
  const expect = { hostnames: ['example.com', '*.example.org'], action: 'signup' };
  const verdict = async (hostname: string, action?: string) => {
    const out = await v.invoke({ token: tok(hostname, action), expect }, opts());
    return out.valid ? 'valid' : out.reason;
  };
  t.equal(await verdict('example.com', 'signup'), 'valid');
  t.equal(await verdict('shop.example.org', 'signup'), 'valid');
  t.equal(await verdict('example.org', 'signup'), 'hostname_mismatch', 'the wildcard is for subdomains');
  t.equal(await verdict('evil-example.com', 'signup'), 'hostname_mismatch');
  t.equal(await verdict('example.com', 'login'), 'action_mismatch');
  t.equal(await verdict('example.com'), 'action_mismatch');
  t.ok(hostnameAllowed('Example.COM.', ['example.com']), 'case and the root dot do not matter');
});

t.test('reCAPTCHA v3: the score against min_score, the instance default when none is asked', async (t) => {
  const fake = await captchaFake(t);
  const v = await verifier('recaptcha', fake.baseUrl, { version: 'v3', min_score: 0.5 });
  const tok = (score: number) => fake.issue({ vendor: 'recaptcha', hostname: 'x.example', action: 'buy', score });
  const high = await v.invoke({ token: tok(0.9) }, opts());
  t.same([high.valid, high.score, high.action], [true, 0.9, 'buy']);
  const low = await v.invoke({ token: tok(0.3) }, opts());
  t.same([low.valid, low.reason, low.score], [false, 'score_below_minimum', 0.3]);
  const asked = await v.invoke({ token: tok(0.6), expect: { min_score: 0.7 } }, opts());
  t.equal(asked.reason, 'score_below_minimum', "the caller's min_score over the default");
  const v2 = await verifier('recaptcha', fake.baseUrl, { version: 'v2' });
  const plain = fake.issue({ vendor: 'recaptcha', hostname: 'x.example' });
  t.equal((await v2.invoke({ token: plain, expect: { min_score: 0.5 } }, opts())).reason, 'score_missing');
});

t.test('hCaptcha: the site key is sent and checked, the risk score turned around', async (t) => {
  const fake = await captchaFake(t);
  const v = await verifier('hcaptcha', fake.baseUrl);
  const token = fake.issue({ vendor: 'hcaptcha', hostname: 'h.example', sitekey: 'site-a', score: 0.2 });
  const out = await v.invoke({ token, site_key: 'site-a', expect: { min_score: 0.7 } }, opts());
  t.same([out.valid, out.score], [true, 0.8], 'risk 0.2 is a human score of 0.8');
  t.equal(fake.calls.at(-1)!.fields.sitekey, 'site-a');
  const other = fake.issue({ vendor: 'hcaptcha', hostname: 'h.example', sitekey: 'site-a' });
  t.same((await v.invoke({ token: other, site_key: 'site-b' }, opts())).error_codes, ['sitekey-secret-mismatch']);
});

t.test('Turnstile: a resend with the same idempotency key reads the first answer', async (t) => {
  const fake = await captchaFake(t);
  const v = await verifier('turnstile', fake.baseUrl);
  const token = fake.issue({ vendor: 'turnstile', hostname: 'a.example' });
  const idempotency_key = '1c6d2a2e-8a5e-4d0b-9a55-7d5b0e4f6a10';
  t.equal((await v.invoke({ token, idempotency_key }, opts())).valid, true);
  t.equal((await v.invoke({ token, idempotency_key }, opts())).valid, true);
  t.equal(fake.calls.at(-1)!.fields.idempotency_key, idempotency_key);
  t.equal((await v.invoke({ token }, opts())).valid, false);
});

t.test('fail closed: a body that is not JSON, a 5xx and a hang are failures, never a valid answer', async (t) => {
  const fake = await captchaFake(t);
  const v = await verifier('turnstile', fake.baseUrl);
  const token = () => fake.issue({ vendor: 'turnstile', hostname: 'a.example' });
  fake.failNext('html', 500, 'hang');
  const kind = (p: Promise<unknown>) =>
    p.then(
      () => 'answered',
      (e: VendorFailure) => e.kind
    );
  t.equal(await kind(v.invoke({ token: token() }, opts())), 'unavailable', 'HTML is no answer');
  t.equal(await kind(v.invoke({ token: token() }, opts())), 'unavailable', '500');
  const ctrl = new AbortController();
  const pending = kind(v.invoke({ token: token() }, opts(ctrl.signal)));
  await new Promise<void>((r) => {
    const wait = () => (fake.calls.length === 3 ? r() : setImmediate(wait));
    wait();
  });
  ctrl.abort(new Error('deadline'));
  t.not(await pending, 'answered', 'an unanswered call ends with its signal');
});

t.test('prices: per verification, from the config', async (t) => {
  const fake = await captchaFake(t);
  t.equal((await verifier('turnstile', fake.baseUrl)).price(), 0, 'Turnstile is free');
  t.equal((await verifier('recaptcha', fake.baseUrl)).price(), 1000, 'reCAPTCHA $0.001');
  t.equal((await verifier('hcaptcha', fake.baseUrl, { price_usd_per_verification: 0.00099 })).price(), 990);
});
