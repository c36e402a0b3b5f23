import t from 'tap';
import { captchaApp, post } from './captcha-app.js';

t.test('site keys: create, list, read, change, delete; only for their own account', async (t) => {
  const { app, a, b } = await captchaApp(t);
  const req = (who: typeof a, method: string, url: string, payload?: Record<string, unknown>) =>
    app.inject({ method: method as any, url, headers: who.auth, payload });
  const count = async () =>
    Number(
      (
        await app.svc.db
          .selectFrom('captcha_site_keys')
          .select((e: any) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n
    );
  for (const bad of [
    { allowed_hostnames: ['https://shop.example.com'] },
    { allowed_hostnames: ['a b'] },
    { difficulty: 10 },
    { difficulty: 1.5 },
    { vendors: { other: { site_key: 'k', secret: 's' } } },
    { vendors: { turnstile: { site_key: 'k' } } },
    { min_score: 2 },
  ]) {
    const res = await post(app, a, '/v1/captcha/site-keys', bad);
    t.equal(res.statusCode, 400, JSON.stringify(bad));
  }
  t.equal(await count(), 0, 'nothing stored for bad input');

  const body = { label: 'signup', allowed_hostnames: ['Shop.Example.com'], idempotency_key: 'sk-1' };
  const created = await post(app, a, '/v1/captcha/site-keys', body);
  t.equal(created.statusCode, 200, created.body);
  const k = created.json();
  t.match(k, { label: 'signup', allowed_hostnames: ['shop.example.com'], difficulty: 50_000, vendors: {} });
  t.match(k.site_key_id, /^csk_/);
  const replay = await post(app, a, '/v1/captcha/site-keys', body);
  t.equal(replay.json().site_key_id, k.site_key_id, 'an idempotent retry makes no second key');
  t.equal(await count(), 1);

  const url = `/v1/captcha/site-keys/${k.site_key_id}`;
  const patched = await req(a, 'PATCH', url, {
    difficulty: 200_000,
    vendors: { hcaptcha: { site_key: 'hc-pub', secret: 'hc-secret' } },
  });
  t.match(patched.json(), { difficulty: 200_000, vendors: { hcaptcha: { site_key: 'hc-pub', secret_set: true } } });
  t.notMatch(patched.body, /hc-secret/);
  const removed = await req(a, 'PATCH', url, { vendors: { hcaptcha: null }, expected_action: 'login' });
  t.match(removed.json(), { vendors: {}, expected_action: 'login', label: 'signup' });
  t.equal((await req(a, 'GET', url)).json().difficulty, 200_000);
  const list = (await req(a, 'GET', '/v1/captcha/site-keys?limit=1')).json();
  t.equal(list.items.length, 1);
  t.equal(list.next_cursor, null);

  for (const [method, payload] of [['GET'], ['PATCH', { label: 'x' }], ['DELETE']] as const)
    t.equal((await req(b, method, url, payload)).statusCode, 404, `${method} by another account`);
  t.equal((await req(b, 'GET', '/v1/captcha/site-keys')).json().items.length, 0);
  t.equal((await req(a, 'DELETE', url)).json().ok, true);
  t.equal((await req(a, 'GET', url)).statusCode, 404);
  t.equal((await app.inject({ method: 'GET', url: `/v1/captcha/sites/${k.site_key_id}/challenge` })).statusCode, 404);
});

t.test('a widget asked for with no site key gets the account its first one', async (t) => {
  const { app, a } = await captchaApp(t);
  const w1 = (await post(app, a, '/v1/captcha/widgets', {})).json();
  const w2 = (await post(app, a, '/v1/captcha/widgets', { vendor: 'service' })).json();
  t.equal(w1.vendor, 'service');
  t.equal(w1.site_key_id, w2.site_key_id);
  const list = await app.inject({ method: 'GET', url: '/v1/captcha/site-keys', headers: a.auth });
  t.equal(list.json().items.length, 1);
});
