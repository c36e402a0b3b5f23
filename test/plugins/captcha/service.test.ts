import t from 'tap';
import { createChallenge } from 'altcha-lib/v1';
import { buildApp } from '../../../core/app.js';
import { loadConfig } from '../../../config/load.js';
import { deriveKey } from '../../../core/auth/sealed.js';
import { ONE_NODE_ONLY } from '../../helpers/app.js';
import { shiftedClock } from '../../helpers/clock.js';
import { balance, captchaApp, challenge, post, siteKey, solve, solvedToken } from './captcha-app.js';

t.test('a solution found as the browser finds it is valid once, then refused; charged per verification', async (t) => {
  const { app, a } = await captchaApp(t);
  const { site_key_id } = await siteKey(app, a);
  const token = await solvedToken(app, site_key_id, 'https://shop.example.com');
  const before = await balance(app, a);
  const first = await post(app, a, '/v1/captcha/verify', { token });
  t.equal(first.statusCode, 200, first.body);
  t.match(first.json(), { valid: true, vendor: 'service', hostname: 'shop.example.com', site_key_id });
  t.equal(first.headers['x-svc-vendor'], 'service');
  t.equal(Number(first.headers['x-svc-cost-usd']), 0.00001);
  const again = await post(app, a, '/v1/captcha/verify', { token, vendor: 'service' });
  t.match(again.json(), { valid: false, reason: 'replayed' });
  t.equal(before - (await balance(app, a)), 20, 'two verifications, 10 micro-USD each');
});

t.test('an expired, a tampered and a foreign challenge are refused', async (t) => {
  const clock = shiftedClock(t);
  const { app, a, b } = await captchaApp(t);
  const { site_key_id } = await siteKey(app, a);

  // The expiry moved later in the salt: the challenge no longer matches its hash.
  const c = (await challenge(app, site_key_id)).json();
  const solved = JSON.parse(Buffer.from(await solve(c), 'base64').toString());
  const forged = {
    ...solved,
    salt: solved.salt.replace(/expires=(\d+)/, (_: string, n: string) => `expires=${Number(n) + 3600}`),
  };
  const tampered = Buffer.from(JSON.stringify(forged)).toString('base64');
  t.match((await post(app, a, '/v1/captcha/verify', { token: tampered })).json(), {
    valid: false,
    reason: 'invalid_solution',
  });
  const wrongNumber = Buffer.from(JSON.stringify({ ...solved, number: solved.number + 1 })).toString('base64');
  t.match((await post(app, a, '/v1/captcha/verify', { token: wrongNumber })).json(), {
    valid: false,
    reason: 'invalid_solution',
  });
  t.match((await post(app, a, '/v1/captcha/verify', { token: 'bm90IGEgdG9rZW4=', vendor: 'service' })).json(), {
    valid: false,
    reason: 'malformed_token',
  });

  // Signed with this account's key but on another account's site key, or verified by another account.
  const theirs = await siteKey(app, b);
  const foreign = await solvedToken(app, theirs.site_key_id);
  t.match((await post(app, a, '/v1/captcha/verify', { token: foreign })).json(), {
    valid: false,
    reason: 'site_key_unknown',
  });
  t.match(
    (await post(app, b, '/v1/captcha/verify', { token: foreign })).json(),
    { valid: true },
    'still good for its own account'
  );
  // A challenge made with the right key but an expiry long past.
  const key = deriveKey(app.svc.masterKey, 'svc-gateway captcha salt v1', `altcha hmac ${a.account_id}`).toString(
    'hex'
  );
  const old = await createChallenge({
    hmacKey: key,
    maxnumber: 1000,
    expires: new Date(Date.now() - 1000),
    params: { sk: site_key_id },
  });
  t.match((await post(app, a, '/v1/captcha/verify', { token: await solve(old) })).json(), {
    valid: false,
    reason: 'expired',
  });
  const late = await solvedToken(app, site_key_id);
  clock.advance(301_000);
  t.match((await post(app, a, '/v1/captcha/verify', { token: late })).json(), { valid: false, reason: 'expired' });
  t.equal(
    Number(
      (
        await app.svc.db
          .selectFrom('captcha_spent')
          .select((e: any) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n
    ),
    1,
    'only the good one is remembered'
  );
});

t.test('the challenge: per site key, CORS from its hostnames, its difficulty; another account 404', async (t) => {
  const { app, a, b } = await captchaApp(t);
  const open = await siteKey(app, a);
  const res = await challenge(app, open.site_key_id, 'https://anywhere.example');
  t.equal(res.statusCode, 200);
  t.equal(res.headers['access-control-allow-origin'], '*', 'no hostnames: any origin');
  t.equal(res.headers['cache-control'], 'no-store');
  t.match(res.json(), { algorithm: 'SHA-256', maxnumber: 1000 });
  const shut = await siteKey(app, a, { allowed_hostnames: ['shop.example.com', '*.example.org'], difficulty: 2000 });
  const ok = await challenge(app, shut.site_key_id, 'https://www.example.org');
  t.equal(ok.headers['access-control-allow-origin'], 'https://www.example.org');
  t.equal(ok.json().maxnumber, 2000);
  const no = await challenge(app, shut.site_key_id, 'https://evil.example');
  t.equal(no.statusCode, 403);
  t.equal(no.json().error.code, 'origin_not_allowed');
  t.notOk(no.headers['access-control-allow-origin']);
  const pre = await app.inject({
    method: 'OPTIONS',
    url: `/v1/captcha/sites/${shut.site_key_id}/challenge`,
    headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'GET' },
  });
  t.equal(pre.statusCode, 204);
  t.equal(pre.headers['access-control-allow-origin'], 'https://shop.example.com');
  t.equal((await challenge(app, 'csk_nope')).statusCode, 404);

  // The page's hostname is signed in: a solution from a page off the list is refused at verify.
  const headless = await solvedToken(app, shut.site_key_id);
  t.match((await post(app, a, '/v1/captcha/verify', { token: headless })).json(), {
    valid: false,
    reason: 'hostname_mismatch',
  });
  const good = await solvedToken(app, shut.site_key_id, 'https://shop.example.com');
  t.match((await post(app, a, '/v1/captcha/verify', { token: good, site_key_id: shut.site_key_id })).json(), {
    valid: true,
  });
  const mismatch = await solvedToken(app, open.site_key_id);
  t.match((await post(app, a, '/v1/captcha/verify', { token: mismatch, site_key_id: shut.site_key_id })).json(), {
    valid: false,
    reason: 'site_key_mismatch',
  });
  const foreign = await post(app, b, '/v1/captcha/verify', { token: good, site_key_id: shut.site_key_id });
  t.equal(foreign.statusCode, 404, "another account's site key is not found");
});

t.test('the widget script is the altcha package, served with CORS', async (t) => {
  const { app, a } = await captchaApp(t);
  const shut = await siteKey(app, a, { allowed_hostnames: ['shop.example.com'] });
  const res = await app.inject({
    method: 'GET',
    url: `/captcha/sites/${shut.site_key_id}/widget.js`,
    headers: { origin: 'https://shop.example.com' },
  });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /javascript/);
  t.equal(res.headers['access-control-allow-origin'], 'https://shop.example.com');
  t.match(res.body, /altcha-widget/);
  const w = await post(app, a, '/v1/captcha/widgets', { site_key_id: shut.site_key_id });
  t.equal(w.statusCode, 200, w.body);
  t.equal(w.json().script_url, `${app.svc.config.server.public_url}/captcha/sites/${shut.site_key_id}/widget.js`);
  t.match(
    w.json().html,
    `challenge="${app.svc.config.server.public_url}/v1/captcha/sites/${shut.site_key_id}/challenge"`
  );
});

t.test('a spent solution stays spent across a restart', async (t) => {
  const { app, a, config } = await captchaApp(t);
  const { site_key_id } = await siteKey(app, a);
  const token = await solvedToken(app, site_key_id);
  t.match((await post(app, a, '/v1/captcha/verify', { token })).json(), { valid: true });
  await app.close();
  const next = await buildApp(loadConfig({ object: config as unknown as Record<string, unknown>, env: {} }));
  t.teardown(() => next.close());
  await next.ready();
  t.match((await post(next, a, '/v1/captcha/verify', { token })).json(), { valid: false, reason: 'replayed' });
});

t.test(
  'two nodes on one database: of 20 concurrent uses of one solution across both, exactly one is valid',
  { skip: ONE_NODE_ONLY },
  async (t) => {
    const { app, a, config } = await captchaApp(t);
    const other = await buildApp(loadConfig({ object: config as unknown as Record<string, unknown>, env: {} }));
    t.teardown(() => other.close());
    await other.ready();
    const { site_key_id } = await siteKey(other, a);
    const token = await solvedToken(app, site_key_id);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(i % 2 ? other : app, a, '/v1/captcha/verify', { token }))
    );
    const bodies = answers.map((r) => r.json());
    t.equal(bodies.filter((b) => b.valid).length, 1);
    t.equal(bodies.filter((b) => b.reason === 'replayed').length, 19);
  }
);

t.test('one node: of 20 concurrent uses of one solution, exactly one is valid', async (t) => {
  const { app, a } = await captchaApp(t);
  const { site_key_id } = await siteKey(app, a);
  const token = await solvedToken(app, site_key_id);
  const answers = await Promise.all(Array.from({ length: 20 }, () => post(app, a, '/v1/captcha/verify', { token })));
  t.equal(answers.filter((r) => r.json().valid).length, 1);
});

t.test('retention removes spent solutions a day past their expiry, keeps the others', async (t) => {
  const { app, a } = await captchaApp(t);
  const day = 24 * 3600 * 1000;
  const now = Date.now();
  await app.svc.db
    .insertInto('captcha_spent')
    .values([
      { challenge: 'old', account_id: a.account_id, expires_at: now - 3 * day },
      { challenge: 'fresh', account_id: a.account_id, expires_at: now + 60_000 },
    ])
    .execute();
  t.match(await app.svc.retention.run(), { captcha_spent: 1 });
  const left = await app.svc.db.selectFrom('captcha_spent').select('challenge').execute();
  t.same(
    left.map((r: any) => r.challenge),
    ['fresh']
  );
});
