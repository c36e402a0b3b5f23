import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { makeApp, activate, type Activated } from '../../helpers/app.js';

// A key manages keys only within its own scopes, and rotation is a chain: one live
// successor per key, and a superseded secret in its grace period cannot manage keys.

type Auth = { authorization: string };
const bearer = (secret: string): Auth => ({ authorization: `Bearer ${secret}` });

async function newKey(app: FastifyInstance, auth: Auth, scopes: string[], label = 'k') {
  const res = await app.inject({ method: 'POST', url: '/v1/account/keys', headers: auth, payload: { label, scopes } });
  if (res.statusCode !== 200) throw new Error(`create key: ${res.statusCode} ${res.body}`);
  return res.json() as { key_id: string; secret: string; scopes: string[] };
}

async function keyRows(app: FastifyInstance, a: Activated) {
  return app.svc.db
    .selectFrom('api_keys')
    .select(['key_id', 'scopes', 'expires_at', 'revoked_at'])
    .where('account_id', '=', a.account_id)
    .orderBy('key_id')
    .execute();
}

async function primaryId(app: FastifyInstance, a: Activated): Promise<string> {
  return (await app.inject({ method: 'GET', url: '/v1/account/keys', headers: a.auth })).json().items[0].key_id;
}

t.test('a key cannot create a key with scopes beyond its own', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const acct = bearer((await newKey(app, a.auth, ['account'])).secret);
  const mixed = bearer((await newKey(app, a.auth, ['account', 'storage:read'])).secret);
  const before = await keyRows(app, a);
  const refused: Array<[Auth, string[] | undefined]> = [
    [acct, ['*']],
    [acct, undefined /* the default is * */],
    [acct, ['storage']],
    [acct, ['account', 'ai']],
    [mixed, ['storage']],
    [mixed, ['storage:write']],
    [mixed, ['*']],
  ];
  for (const [auth, scopes] of refused) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/account/keys',
      headers: auth,
      payload: { label: 'up', ...(scopes ? { scopes } : {}) },
    });
    t.equal(res.statusCode, 403, `${JSON.stringify(scopes)} refused`);
    t.equal(res.json().error.code, 'forbidden');
    t.equal(res.json().error.param, 'scopes');
    t.match(res.json().error.message, /beyond its own scopes/);
    t.notOk(res.json().secret, 'no secret');
  }
  t.same(await keyRows(app, a), before, 'no key was created');
  // Within: the same, narrower, or a level of a held area.
  t.same((await newKey(app, acct, ['account'])).scopes, ['account']);
  t.same((await newKey(app, acct, ['account:read'])).scopes, ['account:read']);
  t.same((await newKey(app, mixed, ['storage:read', 'account:write'])).scopes, ['storage:read', 'account:write']);
  t.same((await newKey(app, a.auth, ['*'])).scopes, ['*'], 'a * key grants anything');
});

t.test('a key cannot rotate (and so read the secret of) a key with scopes beyond its own', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const primary = await primaryId(app, a);
  const acctKey = await newKey(app, a.auth, ['account']);
  const storageKey = await newKey(app, a.auth, ['storage']);
  const before = await keyRows(app, a);
  for (const target of [primary, storageKey.key_id]) {
    const res = await app.inject({
      method: 'POST',
      url: `/v1/account/keys/${target}/rotate`,
      headers: bearer(acctKey.secret),
    });
    t.equal(res.statusCode, 403, `rotate ${target}`);
    t.equal(res.json().error.code, 'forbidden');
    t.notMatch(res.body, /sk_live_/, 'no secret');
  }
  t.same(await keyRows(app, a), before, 'nothing rotated, created or expired');
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).statusCode,
    200,
    'the primary key is untouched'
  );
  const own = await app.inject({
    method: 'POST',
    url: `/v1/account/keys/${acctKey.key_id}/rotate`,
    headers: bearer(acctKey.secret),
  });
  t.equal(own.statusCode, 200, 'a key rotates itself');
  t.same(own.json().scopes, ['account']);
});

t.test('rotation is a chain: a rotated key is not rotated again, its successor is', async (t) => {
  const { app } = await makeApp(t, { limits: { key_rotation_grace_seconds: 600 } });
  const a = await activate(app);
  const k1 = await primaryId(app, a);
  const r1 = await app.inject({ method: 'POST', url: `/v1/account/keys/${k1}/rotate`, headers: a.auth });
  t.equal(r1.statusCode, 200);
  const k2 = r1.json();
  const again = await app.inject({ method: 'POST', url: `/v1/account/keys/${k1}/rotate`, headers: bearer(k2.secret) });
  t.equal(again.statusCode, 409, 'rotating a rotated key is refused');
  t.equal(again.json().error.code, 'conflict');
  t.match(again.json().error.message, new RegExp(`already rotated: its successor is ${k2.key_id}`));
  t.notMatch(again.body, /sk_live_/);
  const live = (await keyRows(app, a)).filter((r) => r.revoked_at === null);
  t.equal(live.length, 2, 'the old key (in its grace period) and one successor, no fork');
  const r2 = await app.inject({
    method: 'POST',
    url: `/v1/account/keys/${k2.key_id}/rotate`,
    headers: bearer(k2.secret),
  });
  t.equal(r2.statusCode, 200, 'the live successor rotates');
  t.equal(r2.json().old_key_id, k2.key_id);
});

t.test('two rotations of one key at once: one succeeds, the other is 409', async (t) => {
  const { app } = await makeApp(t, { limits: { key_rotation_grace_seconds: 600 } });
  const a = await activate(app);
  const k1 = await primaryId(app, a);
  const both = await Promise.all(
    [1, 2].map(() => app.inject({ method: 'POST', url: `/v1/account/keys/${k1}/rotate`, headers: a.auth }))
  );
  t.same(both.map((r) => r.statusCode).sort(), [200, 409]);
  t.equal((await keyRows(app, a)).length, 2, 'one successor; the loser left no key behind');
});

t.test(
  'a superseded secret makes ordinary calls in its grace period but cannot create, rotate or revoke keys',
  async (t) => {
    const { app } = await makeApp(t, { limits: { key_rotation_grace_seconds: 600 } });
    const a = await activate(app);
    const k1 = await primaryId(app, a);
    const other = await newKey(app, a.auth, ['storage:read'], 'other');
    const k2 = (await app.inject({ method: 'POST', url: `/v1/account/keys/${k1}/rotate`, headers: a.auth })).json();
    t.equal(
      (await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).statusCode,
      200,
      'ordinary calls work'
    );
    t.equal(
      (await app.inject({ method: 'GET', url: '/v1/account/keys', headers: a.auth })).statusCode,
      200,
      'so does listing keys'
    );
    const before = await keyRows(app, a);
    const tries = [
      ['POST', '/v1/account/keys', { label: 'minted', scopes: ['*'] }],
      ['POST', '/v1/account/keys', { label: 'minted', scopes: ['storage:read'] }],
      ['POST', `/v1/account/keys/${k2.key_id}/rotate`, undefined],
      ['POST', `/v1/account/keys/${other.key_id}/rotate`, undefined],
      ['POST', `/v1/account/keys/${k1}/rotate`, undefined],
      ['DELETE', `/v1/account/keys/${k2.key_id}`, undefined],
      ['DELETE', `/v1/account/keys/${other.key_id}`, undefined],
    ] as const;
    for (const [method, url, payload] of tries) {
      const res = await app.inject({ method, url, headers: a.auth, ...(payload ? { payload } : {}) });
      t.equal(res.statusCode, 403, `${method} ${url} ${JSON.stringify(payload ?? '')}`);
      t.equal(res.json().error.code, 'forbidden');
      t.match(res.json().error.message, new RegExp(`successor is ${k2.key_id}`));
      t.notMatch(res.body, /sk_live_/);
    }
    t.same(await keyRows(app, a), before, 'nothing changed');
    const fresh = bearer(k2.secret);
    t.equal(
      (await app.inject({ method: 'POST', url: '/v1/account/keys', headers: fresh, payload: { label: 'ok' } }))
        .statusCode,
      200,
      'the live secret manages keys'
    );
    t.equal(
      (await app.inject({ method: 'DELETE', url: `/v1/account/keys/${k1}`, headers: fresh })).statusCode,
      200,
      'and can end the grace period early'
    );
    t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).statusCode, 401);
  }
);

t.test('a key cannot revoke a key with scopes beyond its own (the primary included)', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const primary = await primaryId(app, a);
  const star = await newKey(app, a.auth, ['*'], 'star');
  const storageKey = await newKey(app, a.auth, ['storage']);
  const acctKey = await newKey(app, a.auth, ['account']);
  const before = await keyRows(app, a);
  for (const target of [primary, star.key_id, storageKey.key_id]) {
    const res = await app.inject({
      method: 'DELETE',
      url: `/v1/account/keys/${target}`,
      headers: bearer(acctKey.secret),
    });
    t.equal(res.statusCode, 403, `revoke ${target}`);
    t.equal(res.json().error.code, 'forbidden');
    t.match(res.json().error.message, /cannot revoke .* beyond its own scopes/);
  }
  t.same(await keyRows(app, a), before, 'nothing revoked');
  const narrower = await newKey(app, a.auth, ['account:read']);
  const ok = await app.inject({
    method: 'DELETE',
    url: `/v1/account/keys/${narrower.key_id}`,
    headers: bearer(acctKey.secret),
  });
  t.equal(ok.statusCode, 200, 'a key within its scopes is revoked');
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/v1/account/keys/${star.key_id}`, headers: a.auth })).statusCode,
    200,
    'a * key revokes a * key'
  );
});

t.test("revoking a rotated key's successor ends the grace of every key it replaced", async (t) => {
  const { app } = await makeApp(t, { limits: { key_rotation_grace_seconds: 600 } });
  const a = await activate(app);
  const k1 = await primaryId(app, a);
  const k2 = (await app.inject({ method: 'POST', url: `/v1/account/keys/${k1}/rotate`, headers: a.auth })).json();
  const k3 = (
    await app.inject({ method: 'POST', url: `/v1/account/keys/${k2.key_id}/rotate`, headers: bearer(k2.secret) })
  ).json();
  const other = await newKey(app, bearer(k3.secret), ['account:read'], 'other');
  const balance = (auth: Auth) => app.inject({ method: 'GET', url: '/v1/account/balance', headers: auth });
  t.equal((await balance(a.auth)).statusCode, 200, 'the first secret is in its grace period');
  t.equal((await balance(bearer(k2.secret))).statusCode, 200, 'so is the second');
  const res = await app.inject({ method: 'DELETE', url: `/v1/account/keys/${k3.key_id}`, headers: bearer(k3.secret) });
  t.equal(res.statusCode, 200);
  for (const [name, auth] of [
    ['the revoked key', bearer(k3.secret)],
    ['its predecessor', bearer(k2.secret)],
    ["the predecessor's predecessor", a.auth],
  ] as const) {
    t.equal((await balance(auth)).statusCode, 401, `${name} is refused at once`);
  }
  t.equal((await balance(bearer(other.secret))).statusCode, 200, 'a key outside the chain lives on');
  const live = (await keyRows(app, a)).filter((r) => r.revoked_at === null).map((r) => r.key_id);
  t.same(live, [other.key_id]);
});
