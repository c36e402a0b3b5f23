import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { shiftedClock } from '../../helpers/clock.js';

const ENDPOINTS = [
  ['GET', '/v1/account'],
  ['GET', '/v1/account/balance'],
  ['GET', '/v1/account/keys'],
  ['POST', '/v1/account/keys'],
  ['DELETE', '/v1/account/keys/key_x'],
  ['POST', '/v1/account/keys/key_x/rotate'],
  ['POST', '/v1/account/topup'],
  ['GET', '/v1/account/topups'],
  ['GET', '/v1/account/topups/top_x'],
  ['POST', '/v1/account/tier/upgrade'],
] as const;

t.test('missing, malformed, wrong and revoked keys are 401 on every account endpoint', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const created = (
    await app.inject({ method: 'POST', url: '/v1/account/keys', headers: a.auth, payload: { label: 'doomed' } })
  ).json();
  const doomed = { authorization: `Bearer ${created.secret}` };
  // Warm the key cache with the doomed key, so revocation has a cached entry to beat.
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: doomed })).statusCode, 200);
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/v1/account/keys/${created.key_id}`, headers: a.auth })).json().ok,
    true
  );

  const bad: Record<string, Record<string, string>> = {
    missing: {},
    'empty bearer': { authorization: 'Bearer ' },
    'basic scheme': { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
    'two tokens': { authorization: `Bearer ${a.key} extra` },
    'wrong shape': { authorization: 'Bearer sk_test_123' },
    'unknown key': { authorization: `Bearer sk_live_${'A'.repeat(32)}` },
    'unknown x-api-key': { 'x-api-key': `sk_live_${'B'.repeat(32)}` },
    revoked: doomed,
  };
  const before = await app.svc.db.selectFrom('api_keys').select('key_id').execute();
  for (const [name, headers] of Object.entries(bad)) {
    for (const [method, url] of ENDPOINTS) {
      const res = await app.inject({ method, url, headers, ...(method === 'POST' ? { payload: {} } : {}) });
      t.equal(res.statusCode, 401, `${name}: ${method} ${url}`);
      t.equal(res.json().error.code, 'unauthenticated');
      t.notMatch(res.body, a.key, 'no secret echoed');
    }
  }
  t.equal((await app.svc.db.selectFrom('api_keys').select('key_id').execute()).length, before.length);
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).statusCode,
    200,
    'the primary key still works'
  );
});

t.test("another account's key ids and top-up ids are 404", async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const aKeys = (await app.inject({ method: 'GET', url: '/v1/account/keys', headers: a.auth })).json().items;
  const aKey = aKeys[0].key_id;
  const top = (
    await app.inject({ method: 'POST', url: '/v1/account/topup', headers: b.auth, payload: { amount_usd: 5 } })
  ).json();
  const tries = [
    ['DELETE', `/v1/account/keys/${aKey}`],
    ['POST', `/v1/account/keys/${aKey}/rotate`],
    ['DELETE', '/v1/account/keys/key_unknown'],
    ['POST', '/v1/account/keys/key_unknown/rotate'],
  ] as const;
  for (const [method, url] of tries) {
    const res = await app.inject({ method, url, headers: b.auth });
    t.equal(res.statusCode, 404, `${method} ${url}`);
    t.equal(res.json().error.code, 'not_found');
  }
  t.equal(
    (await app.inject({ method: 'GET', url: `/v1/account/topups/${top.topup_id}`, headers: a.auth })).statusCode,
    404
  );
  // a's key is untouched: not revoked, not rotated.
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).statusCode, 200);
  const rows = await app.svc.db.selectFrom('api_keys').selectAll().where('account_id', '=', a.account_id).execute();
  t.equal(rows.length, 1);
  t.equal(rows[0].revoked_at, null);
  t.equal(rows[0].expires_at, null);
});

t.test('rotate keeps the old key valid until old_key_expires_at, then 401', async (t) => {
  const { app } = await makeApp(t, { limits: { key_rotation_grace_seconds: 1 } });
  const a = await activate(app);
  const keyId = (await app.inject({ method: 'GET', url: '/v1/account/keys', headers: a.auth })).json().items[0].key_id;
  const res = await app.inject({ method: 'POST', url: `/v1/account/keys/${keyId}/rotate`, headers: a.auth });
  t.equal(res.statusCode, 200);
  const r = res.json();
  t.equal(r.old_key_id, keyId);
  t.not(r.key_id, keyId);
  t.match(r.secret, /^sk_live_/);
  const expiresAt = Date.parse(r.old_key_expires_at);
  t.ok(expiresAt > Date.now() && expiresAt <= Date.now() + 1000);
  const fresh = { authorization: `Bearer ${r.secret}` };
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).statusCode,
    200,
    'old key in its grace period'
  );
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: fresh })).statusCode, 200, 'new key');
  // Past the grace period on the gateway's clock (this process's), with no wait.
  shiftedClock(t).advance(Math.max(0, expiresAt - Date.now()) + 50);
  const old = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  t.equal(old.statusCode, 401, 'old key after the grace period, despite the cache');
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: fresh })).statusCode, 200);
  const listed = (await app.inject({ method: 'GET', url: '/v1/account/keys', headers: fresh }))
    .json()
    .items.map((k: any) => k.key_id);
  t.same(listed, [r.key_id]);
});

t.test('a key limited to storage cannot manage the account', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const k = (
    await app.inject({
      method: 'POST',
      url: '/v1/account/keys',
      headers: a.auth,
      payload: { label: 's', scopes: ['storage:read'] },
    })
  ).json();
  const res = await app.inject({
    method: 'POST',
    url: '/v1/account/topup',
    headers: { authorization: `Bearer ${k.secret}` },
    payload: { amount_usd: 5 },
  });
  t.equal(res.statusCode, 403);
  t.equal(res.json().error.code, 'forbidden');
  t.equal((await app.svc.db.selectFrom('topups').select('topup_id').execute()).length, 0);
});
