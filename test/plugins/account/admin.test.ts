import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';

const ADMIN = 'operator-secret-0123456789';
const admin = { authorization: `Bearer ${ADMIN}` };

t.test('list accounts, newest first and paginated', async (t) => {
  const { app } = await makeApp(t, { admin_key: ADMIN });
  const made = [];
  for (let i = 0; i < 3; i++) made.push(await activate(app));
  const seen: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await app.inject({
      method: 'GET',
      url: `/v1/admin/accounts?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      headers: admin,
    });
    t.equal(res.statusCode, 200);
    const page: any = res.json();
    seen.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  t.same(seen.map((a) => a.account_id).sort(), made.map((a) => a.account_id).sort());
  t.ok(
    seen.every((x, i) => i === 0 || x.created_at <= seen[i - 1].created_at),
    'newest first'
  );
  t.match(seen[0], { kind: 'anonymous', status: 'active', tier: 'free', balance_usd: 5 });
});

t.test('credit an account', async (t) => {
  const { app } = await makeApp(t, { admin_key: ADMIN });
  const a = await activate(app);
  const res = await app.inject({
    method: 'POST',
    url: `/v1/admin/accounts/${a.account_id}/credit`,
    headers: admin,
    payload: { amount_usd: 12.5, note: 'goodwill' },
  });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { account_id: a.account_id, balance_usd: 17.5 });
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 17.5);
  const l = await app.svc.db
    .selectFrom('wallet_ledger')
    .selectAll()
    .where('account_id', '=', a.account_id)
    .where('kind', '=', 'admin')
    .execute();
  t.equal(l.length, 1);
  t.equal(Number(l[0].amount_micros), 12_500_000);
  t.equal(l[0].ref, 'admin: goodwill');

  const unknown = await app.inject({
    method: 'POST',
    url: '/v1/admin/accounts/acct_nope/credit',
    headers: admin,
    payload: { amount_usd: 1 },
  });
  t.equal(unknown.statusCode, 404);
  for (const payload of [
    { amount_usd: 0 },
    { amount_usd: -1 },
    { amount_usd: '5' },
    { amount_usd: 1.001 },
    { amount_usd: 1, extra: true },
    {},
  ]) {
    const bad = await app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${a.account_id}/credit`,
      headers: admin,
      payload,
    });
    t.equal(bad.statusCode, 400, JSON.stringify(payload));
    t.equal(bad.json().error.code, 'validation_failed');
  }
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 17.5);
});

t.test('suspend and resume take effect at once', async (t) => {
  const { app } = await makeApp(t, { admin_key: ADMIN });
  const a = await activate(app);
  const other = await activate(app);
  // Warm the key cache so a stale entry would let the suspended key through.
  t.equal((await app.inject({ method: 'GET', url: '/v1/account', headers: a.auth })).statusCode, 200);
  const s = await app.inject({ method: 'POST', url: `/v1/admin/accounts/${a.account_id}/suspend`, headers: admin });
  t.equal(s.statusCode, 200);
  t.equal(s.json().status, 'suspended');
  for (const [method, url] of [
    ['GET', '/v1/account'],
    ['GET', '/v1/account/balance'],
    ['GET', '/v1/account/keys'],
    ['POST', '/v1/account/topup'],
  ] as const) {
    const r = await app.inject({
      method,
      url,
      headers: a.auth,
      ...(method === 'POST' ? { payload: { amount_usd: 5 } } : {}),
    });
    t.equal(r.statusCode, 403, url);
    t.equal(r.json().error.code, 'forbidden');
  }
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/account', headers: other.auth })).statusCode,
    200,
    'other accounts unaffected'
  );
  const twice = await app.inject({ method: 'POST', url: `/v1/admin/accounts/${a.account_id}/suspend`, headers: admin });
  t.equal(twice.statusCode, 409);
  t.equal(twice.json().error.code, 'invalid_state');

  const r = await app.inject({ method: 'POST', url: `/v1/admin/accounts/${a.account_id}/resume`, headers: admin });
  t.equal(r.statusCode, 200);
  t.equal(r.json().status, 'active');
  t.equal((await app.inject({ method: 'GET', url: '/v1/account', headers: a.auth })).json().status, 'active');
  t.equal(
    (await app.inject({ method: 'POST', url: `/v1/admin/accounts/${a.account_id}/resume`, headers: admin })).statusCode,
    409
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/v1/admin/accounts/acct_nope/suspend', headers: admin })).statusCode,
    404
  );
});

t.test('the admin key is not a tenant key, and a tenant key is not an admin key', async (t) => {
  const { app } = await makeApp(t, { admin_key: ADMIN });
  const a = await activate(app);
  for (const url of ['/v1/account', '/v1/account/balance', '/v1/account/keys', '/v1/account/topups']) {
    const r = await app.inject({ method: 'GET', url, headers: admin });
    t.equal(r.statusCode, 401, url);
    t.equal(r.json().error.code, 'unauthenticated');
  }
  for (const headers of [a.auth, {}, { authorization: `Bearer ${ADMIN}x` }, { 'x-api-key': 'nope' }]) {
    const r = await app.inject({ method: 'GET', url: '/v1/admin/accounts', headers });
    t.equal(r.statusCode, 401, JSON.stringify(headers));
  }
  const inApiKey = await app.inject({ method: 'GET', url: '/v1/admin/accounts', headers: { 'x-api-key': ADMIN } });
  t.equal(inApiKey.statusCode, 401, 'the admin key only as Authorization: Bearer (docs/account.md)');
  t.match(inApiKey.json().error.message, /Authorization: Bearer/);
  t.notMatch(inApiKey.body, ADMIN);
  const schemes = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json().components.securitySchemes;
  t.same(Object.keys(schemes).sort(), ['adminKey', 'apiKeyHeader', 'bearerAuth'], 'OpenAPI lists the admin scheme');
});

t.test(
  'with no admin key the admin API does not exist: every /v1/admin/* path answers as an unknown route',
  async (t) => {
    const { app } = await makeApp(t);
    const a = await activate(app);
    // What any unknown route answers, with the method and path it names filled in.
    const unknown = (
      await app.inject({ method: 'GET', url: '/v1/no-such-area/x', headers: { 'x-request-id': 'req-same' } })
    ).json();
    const expected = (method: string, url: string) => ({
      error: {
        ...unknown.error,
        message: unknown.error.message.replace('GET /v1/no-such-area/x', `${method} ${url.split('?')[0]}`),
      },
    });
    const tries = [
      ['GET', '/v1/admin/accounts'],
      ['GET', '/v1/admin/accounts?limit=2'],
      ['DELETE', '/v1/admin/accounts'],
      ['PUT', '/v1/admin/accounts'],
      ['POST', `/v1/admin/accounts/${a.account_id}/credit`],
      ['GET', `/v1/admin/accounts/${a.account_id}/credit`],
      ['POST', `/v1/admin/accounts/${a.account_id}/suspend`],
      ['POST', `/v1/admin/accounts/${a.account_id}/resume`],
      ['GET', '/v1/admin'],
      ['GET', '/v1/admin/nothing/here'],
    ] as const;
    for (const [method, url] of tries) {
      for (const headers of [{}, a.auth, { authorization: 'Bearer ' }, { authorization: `Bearer ${ADMIN}` }]) {
        const r = await app.inject({
          method,
          url,
          headers: { ...headers, 'x-request-id': 'req-same' },
          ...(method === 'POST' ? { payload: { amount_usd: 5 } } : {}),
        });
        t.equal(r.statusCode, 404, `${method} ${url}`);
        t.same(r.json(), expected(method, url), `${method} ${url}: the unknown-route body`);
        t.equal(r.headers.allow, undefined, 'no methods offered');
        t.notMatch(r.body.replace(url.split('?')[0], ''), /admin/i, 'nothing but the path names admin');
      }
    }
    const discovery = (await app.inject({ method: 'GET', url: '/v1/discovery' })).body;
    t.notMatch(discovery, /admin\.accounts/, 'discovery lists no admin operation');
    const paths = Object.keys((await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json().paths);
    t.same(
      paths.filter((p) => p.startsWith('/v1/admin')),
      [],
      'OpenAPI has no admin path'
    );
    const schemes = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json().components.securitySchemes;
    t.same(Object.keys(schemes).sort(), ['apiKeyHeader', 'bearerAuth'], 'nor the admin security scheme');
    t.equal(
      (await app.inject({ method: 'GET', url: '/v1/account', headers: a.auth })).json().status,
      'active',
      'nothing was suspended'
    );
    t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 5);
  }
);
