import t from 'tap';
import { CAPTCHA_SECRETS, captchaFake } from '../../fakes/captcha-fake.js';
import { balance, captchaApp, post, siteKey } from './captcha-app.js';

// The three siteverify vendors through the API, against the loopback fake of their wire.
async function setup(t: Tap) {
  const fake = await captchaFake(t);
  const vendor = (use: string, config: Record<string, unknown> = {}) => ({
    id: use,
    use,
    config: { secret_key: CAPTCHA_SECRETS[use as keyof typeof CAPTCHA_SECRETS], base_url: fake.baseUrl, ...config },
  });
  const made = await captchaApp(t, {
    // A hang is cut at one second: the real passage of time is what a timeout is.
    plugins: { captcha: { timeout_seconds: 1 } },
    vendors: [vendor('turnstile'), vendor('hcaptcha'), vendor('recaptcha', { version: 'v3', min_score: 0.5 })],
  });
  return { fake, ...made };
}
type Tap = Parameters<Parameters<typeof t.test>[1]>[0];

t.test('a pinned vendor verifies through its siteverify wire; the answer is CaptchaVerifyResult', async (t) => {
  const { app, a, fake } = await setup(t);
  const token = fake.issue({ vendor: 'turnstile', hostname: 'shop.example.com', action: 'login' });
  const res = await post(app, a, '/v1/captcha/verify', { token, vendor: 'turnstile', remote_ip: '198.51.100.7' });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), { valid: true, vendor: 'turnstile', hostname: 'shop.example.com', action: 'login' });
  t.equal(res.headers['x-svc-vendor'], 'turnstile');
  const call = fake.calls.at(-1)!;
  t.equal(call.fields.remoteip, '198.51.100.7');
  t.match(call.fields.idempotency_key, /^[0-9a-f-]{36}$/, 'a UUID, as Turnstile wants');
  t.match((await post(app, a, '/v1/captcha/verify', { token, vendor: 'turnstile' })).json(), {
    valid: false,
    reason: 'vendor_rejected',
    error_codes: ['timeout-or-duplicate'],
  });
});

t.test("a site key's own secret, hostnames and action apply; its secret is never returned", async (t) => {
  const { app, a, b, fake } = await setup(t);
  const key = await siteKey(app, a, {
    allowed_hostnames: ['shop.example.com'],
    expected_action: 'signup',
    vendors: { turnstile: { site_key: '0x4AAAA-public', secret: 'account-own-turnstile-secret' } },
  });
  t.notMatch(JSON.stringify(key), /account-own-turnstile-secret/);
  t.match(key, { vendors: { turnstile: { site_key: '0x4AAAA-public', secret_set: true } } });
  const row = await app.svc.db.selectFrom('captcha_site_keys').select('vendors').executeTakeFirstOrThrow();
  t.notMatch(row.vendors, /account-own-turnstile-secret/, 'sealed at rest');
  const issue = (hostname: string, action: string) =>
    fake.issue({ vendor: 'turnstile', hostname, action, secret: 'account-own-turnstile-secret' });
  const verify = (token: string, who = a) =>
    post(app, who, '/v1/captcha/verify', { token, site_key_id: key.site_key_id });
  // The site key names only turnstile: the vendor need not be named.
  t.match((await verify(issue('shop.example.com', 'signup'))).json(), { valid: true, vendor: 'turnstile' });
  t.equal(fake.calls.at(-1)!.fields.secret, 'account-own-turnstile-secret');
  t.match((await verify(issue('evil.example', 'signup'))).json(), { valid: false, reason: 'hostname_mismatch' });
  t.match((await verify(issue('shop.example.com', 'login'))).json(), { valid: false, reason: 'action_mismatch' });
  const calls = fake.calls.length;
  t.equal((await verify(issue('shop.example.com', 'signup'), b)).statusCode, 404, "another account's key");
  t.equal(fake.calls.length, calls, 'nothing sent for it');
});

t.test('score vendors: min_score from the call, the site key, or the instance; charged per verification', async (t) => {
  const { app, a, fake } = await setup(t);
  const tok = (score: number) => fake.issue({ vendor: 'recaptcha', hostname: 'x.example', action: 'buy', score });
  const before = await balance(app, a);
  const high = await post(app, a, '/v1/captcha/verify', { token: tok(0.9), vendor: 'recaptcha' });
  t.match(high.json(), { valid: true, score: 0.9, action: 'buy' });
  t.equal(Number(high.headers['x-svc-cost-usd']), 0.001);
  t.match((await post(app, a, '/v1/captcha/verify', { token: tok(0.4), vendor: 'recaptcha' })).json(), {
    valid: false,
    reason: 'score_below_minimum',
  });
  const asked = await post(app, a, '/v1/captcha/verify', { token: tok(0.8), vendor: 'recaptcha', min_score: 0.85 });
  t.match(asked.json(), { valid: false, reason: 'score_below_minimum' });
  const strict = await siteKey(app, a, { min_score: 0.95 });
  const bySite = await post(app, a, '/v1/captcha/verify', {
    token: tok(0.9),
    vendor: 'recaptcha',
    site_key_id: strict.site_key_id,
  });
  t.match(bySite.json(), { valid: false, reason: 'score_below_minimum' });
  t.equal(before - (await balance(app, a)), 4000, 'four verifications at 0.001 USD');
  const h = fake.issue({ vendor: 'hcaptcha', hostname: 'x.example', score: 0.1 });
  t.match((await post(app, a, '/v1/captcha/verify', { token: h, vendor: 'hcaptcha', min_score: 0.8 })).json(), {
    valid: true,
    score: 0.9,
  });
});

t.test('fail closed: no JSON, a 5xx or no answer in time is valid: false with a reason, not charged', async (t) => {
  const { app, a, fake } = await setup(t);
  const before = await balance(app, a);
  const verify = async () => {
    const token = fake.issue({ vendor: 'recaptcha', hostname: 'x.example', score: 0.9 });
    const res = await post(app, a, '/v1/captcha/verify', { token, vendor: 'recaptcha' });
    t.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  fake.failNext('html', 500, 'hang');
  t.match(await verify(), { valid: false, reason: 'vendor_unavailable', vendor: 'recaptcha' });
  t.match(await verify(), { valid: false, reason: 'vendor_unavailable' });
  t.match(await verify(), { valid: false, reason: 'vendor_timeout' });
  t.equal(await balance(app, a), before, 'nothing charged');
  t.match(await verify(), { valid: true }, 'the next answer is read again');
});

t.test('bad input is 4xx, sends nothing and charges nothing', async (t) => {
  const { app, a, fake } = await setup(t);
  const before = await balance(app, a);
  const cases: [Record<string, unknown>, number][] = [
    [{}, 400],
    [{ token: '' }, 400],
    [{ token: 'x', vendor: 'turnstile', surprise: 1 }, 400],
    [{ token: 'x', vendor: 'recaptcha', min_score: 1.5 }, 400],
    [{ token: 'x' }, 400], // not a service solution, and three vendors could have issued it
    [{ token: 'x', vendor: 'turnstile', site_key_id: 'csk_unknown' }, 404],
    [{ token: 'x', vendor: 'no-such-vendor' }, 503],
  ];
  for (const [body, status] of cases) {
    const res = await post(app, a, '/v1/captcha/verify', body);
    t.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`);
    t.ok(res.json().error?.code);
  }
  t.equal(fake.calls.length, 0);
  t.equal(await balance(app, a), before);
});

t.test('widgets: each vendor its script and element, from the site key', async (t) => {
  const { app, a, b } = await setup(t);
  const key = await siteKey(app, a, {
    expected_action: 'signup',
    vendors: {
      turnstile: { site_key: '0x4AAAA-pub', secret: 's1' },
      hcaptcha: { site_key: 'hc-pub', secret: 's2' },
      recaptcha: { site_key: '6Lc-pub', secret: 's3' },
    },
  });
  const widget = (vendor: string, who = a, site_key_id = key.site_key_id) =>
    post(app, who, '/v1/captcha/widgets', { vendor, site_key_id });
  t.same((await widget('turnstile')).json(), {
    html: '<div class="cf-turnstile" data-sitekey="0x4AAAA-pub" data-action="signup"></div>',
    script_url: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
    site_key_id: key.site_key_id,
    vendor: 'turnstile',
  });
  t.match((await widget('hcaptcha')).json(), { script_url: 'https://js.hcaptcha.com/1/api.js', html: /h-captcha/ });
  t.match((await widget('recaptcha')).json(), { script_url: /render=6Lc-pub/, html: /data-action="signup"/ });
  const bare = await siteKey(app, a);
  t.equal((await widget('hcaptcha', a, bare.site_key_id)).statusCode, 422, 'no hCaptcha key on it');
  t.equal((await widget('turnstile', b)).statusCode, 404, "another account's key");
});
