import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';

// database-independent: error shapes; the key lookups behind the 401s are account/keys-auth's, on both.

t.test('the conventions error body for malformed requests', async (t) => {
  const { app } = await makeApp(t, { limits: { body_bytes: 2048 } });
  const a = await activate(app);

  const bad = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: { ...a.auth, 'content-type': 'application/json' },
    payload: '{"label":',
  });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error.code, 'invalid_request');
  t.equal(bad.json().error.status, 400);

  const big = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: a.auth,
    payload: { label: 'x'.repeat(4000) },
  });
  t.equal(big.statusCode, 413);
  t.equal(big.json().error.code, 'payload_too_large');
  t.match(big.json().error.message, /2048 bytes/);

  const form = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: { ...a.auth, 'content-type': 'text/plain' },
    payload: 'label=x',
  });
  t.equal(form.statusCode, 415);
  t.equal(form.json().error.code, 'unsupported_media_type');

  const many = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: a.auth,
    payload: { label: 5, scopes: ['BAD'], extra: true },
  });
  t.equal(many.statusCode, 400);
  const params = many
    .json()
    .error.details.errors.map((e: { param: string }) => e.param)
    .sort();
  t.same(params, ['extra', 'label', 'scopes[0]'], 'every bad field is listed');

  const missing = await app.inject({ method: 'GET', url: '/v1/nothing-here', headers: a.auth });
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().error.code, 'not_found');

  const keys = await app.svc.db.selectFrom('api_keys').select('key_id').execute();
  t.equal(keys.length, 1, 'no rejected call wrote a key');
});

t.test("request ids: generated, or the caller's echoed", async (t) => {
  const { app } = await makeApp(t);
  const own = await app.inject({ method: 'GET', url: '/v1/version', headers: { 'x-request-id': 'trace-123' } });
  t.equal(own.headers['x-request-id'], 'trace-123');
  const gen = await app.inject({ method: 'GET', url: '/v1/version' });
  t.match(gen.headers['x-request-id'], /^req_/);
  const junk = await app.inject({
    method: 'GET',
    url: '/v1/version',
    headers: { 'x-request-id': 'bad id with spaces' },
  });
  t.match(junk.headers['x-request-id'], /^req_/);
  const e = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: { 'x-request-id': 'trace-9' } });
  t.equal(e.json().error.request_id, 'trace-9');
});

t.test('401 for missing, malformed, unknown and revoked keys', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const cases: Record<string, string>[] = [
    {},
    { authorization: 'Basic abc' },
    { authorization: `Bearer sk_live_${'A'.repeat(32)}` },
    { 'x-api-key': 'nope' },
  ];
  for (const headers of cases) {
    const r = await app.inject({ method: 'GET', url: '/v1/account/balance', headers });
    t.equal(r.statusCode, 401, JSON.stringify(headers));
    t.equal(r.json().error.code, 'unauthenticated');
  }
  const k = (
    await app.inject({ method: 'POST', url: '/v1/account/keys', headers: a.auth, payload: { label: 'tmp' } })
  ).json();
  const kAuth = { authorization: `Bearer ${k.secret}` };
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: kAuth })).statusCode, 200);
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/v1/account/keys/${k.key_id}`, headers: a.auth })).statusCode,
    200
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/account/balance', headers: kAuth })).statusCode,
    401,
    'revocation beats the cache'
  );
});

t.test("scopes: 403 outside the key's scopes", async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const k = (
    await app.inject({
      method: 'POST',
      url: '/v1/account/keys',
      headers: a.auth,
      payload: { label: 'ro', scopes: ['account:read'] },
    })
  ).json();
  const auth = { authorization: `Bearer ${k.secret}` };
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: auth })).statusCode, 200);
  const w = await app.inject({ method: 'POST', url: '/v1/account/keys', headers: auth, payload: { label: 'x' } });
  t.equal(w.statusCode, 403);
  t.equal(w.json().error.code, 'forbidden');
  const other = (
    await app.inject({
      method: 'POST',
      url: '/v1/account/keys',
      headers: a.auth,
      payload: { label: 'st', scopes: ['storage'] },
    })
  ).json();
  t.equal(
    (
      await app.inject({
        method: 'GET',
        url: '/v1/account/balance',
        headers: { authorization: `Bearer ${other.secret}` },
      })
    ).statusCode,
    403
  );
});

t.test('a known path with another method is 405 with allow', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const r = await app.inject({ method: 'DELETE', url: '/v1/account/balance', headers: a.auth });
  t.equal(r.statusCode, 405);
  t.equal(r.json().error.code, 'method_not_allowed');
  t.match(r.headers.allow, /GET/);
  const p = await app.inject({ method: 'PUT', url: '/v1/account/keys/key_abc', headers: a.auth });
  t.equal(p.statusCode, 405);
  t.match(p.headers.allow, /DELETE/);
});
