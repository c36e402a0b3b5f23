import t from 'tap';
import { makeApp, activate } from '../helpers/app.js';

// database-independent: the page's statements; idempotency and cursors are their own files', on both.

// docs/api-conventions.md states the project's decisions where the conventions are silent.
// Each test here is one statement of that page, checked against the running gateway.

const keys = (auth: Record<string, string>) => ({ method: 'POST' as const, url: '/v1/account/keys', headers: auth });

t.test('request ids: a valid x-request-id is echoed, anything else is replaced', async (t) => {
  const { app } = await makeApp(t);
  const echoed = await app.inject({
    method: 'GET',
    url: '/healthz',
    headers: { 'x-request-id': 'trace-01:abc.DEF_9' },
  });
  t.equal(echoed.headers['x-request-id'], 'trace-01:abc.DEF_9');
  for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
    const res = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': bad } });
    t.equal(res.statusCode, 200, 'an invalid id is not an error');
    t.match(res.headers['x-request-id'], /^req_[0-9A-Za-z]+$/, JSON.stringify(bad.slice(0, 20)));
  }
  const missing = await app.inject({ method: 'GET', url: '/v1/nowhere', headers: { 'x-request-id': 'abc-123' } });
  t.equal(missing.statusCode, 404);
  t.equal(missing.headers['x-request-id'], 'abc-123');
  t.equal(missing.json().error.request_id, 'abc-123', 'the body carries the same id');
});

t.test('rate limits: a token bucket of burst, with the ratelimit-* headers', async (t) => {
  const { app } = await makeApp(t, { tiers: { free: { rate_per_minute: 60, burst: 3, price_usd: 0 } } });
  const a = await activate(app);
  const first = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  t.equal(first.headers['ratelimit-limit'], '3');
  t.equal(first.headers['ratelimit-remaining'], '2');
  t.equal(first.headers['ratelimit-policy'], '60;w=60;burst=3');
  t.ok(Number(first.headers['ratelimit-reset']) >= 1);
  await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  const over = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  t.equal(over.statusCode, 429);
  t.equal(over.headers['ratelimit-remaining'], '0');
  t.ok(Number(over.headers['retry-after']) >= 1);
  t.equal(over.headers['retry-after'], over.headers['ratelimit-reset']);

  const other = await app.inject({ ...keys(a.auth), url: '/v1/account/keys' });
  t.equal(other.statusCode, 429, 'every route of the key shares its bucket');

  const keyless = await app.inject({ method: 'GET', url: '/v1/account/balance' });
  t.equal(keyless.statusCode, 401);
  t.notOk(keyless.headers['ratelimit-limit'], 'a 401 carries no rate-limit headers');
  const activation = await app.inject({ method: 'POST', url: '/v1/activate', payload: {} });
  t.notOk(activation.headers['ratelimit-limit'], 'keyless endpoints carry none');
});

t.test('auth: a malformed Authorization header wins over x-api-key', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const res = await app.inject({
    method: 'GET',
    url: '/v1/account/balance',
    headers: { authorization: 'Basic abc', 'x-api-key': a.key },
  });
  t.equal(res.statusCode, 401);
});

t.test('creates answer 200, and idempotency keys replay the stored answer', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const withKey = (k: string) => keys({ ...a.auth, 'idempotency-key': k });
  const first = await app.inject({ ...withKey('k1'), payload: { label: 'ci', scopes: ['account'] } });
  t.equal(first.statusCode, 200, 'a create answers 200');
  t.notOk(first.headers['idempotent-replayed']);
  const again = await app.inject({ ...withKey('k1'), payload: { scopes: ['account'], label: 'ci' } });
  t.equal(again.statusCode, 200);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(again.json().key_id, first.json().key_id, 'same body, key order aside: the stored answer');

  const reused = await app.inject({ ...withKey('k1'), payload: { label: 'other' } });
  t.equal(reused.statusCode, 409);
  t.equal(reused.json().error.code, 'idempotency_key_reused');

  const elsewhere = await activate(app);
  const otherAccount = await app.inject({
    ...keys({ ...elsewhere.auth, 'idempotency-key': 'k1' }),
    payload: { label: 'ci', scopes: ['account'] },
  });
  t.equal(otherAccount.statusCode, 200, 'keys are scoped to the account');
  t.notOk(otherAccount.headers['idempotent-replayed']);

  const invalid = await app.inject({ ...withKey('k2'), payload: { label: 'x', nope: 1 } });
  t.equal(invalid.statusCode, 400);
  const afterInvalid = await app.inject({ ...withKey('k2'), payload: { label: 'x' } });
  t.equal(afterInvalid.statusCode, 200, 'a request that failed validation did not claim its key');
  t.notOk(afterInvalid.headers['idempotent-replayed']);

  const long = await app.inject({ ...withKey('k'.repeat(256)), payload: { label: 'x' } });
  t.equal(long.statusCode, 400);
  t.equal(long.json().error.param, 'idempotency_key');

  const list = await app.inject({ method: 'GET', url: '/v1/account/keys?limit=200', headers: a.auth });
  t.equal(list.json().items.length, 3, 'primary, k1, k2: replays and refusals created nothing');
});

t.test('cursors: opaque, positional, validated', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  for (const label of ['b', 'c']) t.equal((await app.inject({ ...keys(a.auth), payload: { label } })).statusCode, 200);
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const url: string = `/v1/account/keys?limit=1${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await app.inject({ method: 'GET', url, headers: a.auth });
    t.equal(res.statusCode, 200);
    const body: { items: { key_id: string }[]; next_cursor: string | null } = res.json();
    seen.push(...body.items.map((k) => k.key_id));
    cursor = body.next_cursor;
    if (pages === 0)
      t.equal(
        (await app.inject({ ...keys(a.auth), payload: { label: 'late' } })).statusCode,
        200,
        'created after the first page'
      );
    pages++;
  } while (cursor && pages < 10);
  t.equal(seen.length, 3, 'newest first, and a key created meanwhile neither shifts nor repeats');
  t.equal(new Set(seen).size, 3);
  const bad = await app.inject({ method: 'GET', url: '/v1/account/keys?cursor=not-a-cursor', headers: a.auth });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error.code, 'validation_failed');
  t.equal(bad.json().error.param, 'cursor');
  const over = await app.inject({ method: 'GET', url: '/v1/account/keys?limit=201', headers: a.auth });
  t.equal(over.statusCode, 400);
});
