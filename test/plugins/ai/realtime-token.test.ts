import t from 'tap';
import { activate, makeApp } from '../../helpers/app.js';
import { traceLoggedApp } from '../../helpers/trace-logged-app.js';
import { openAiFake } from '../../fakes/openai-fake.js';
import { aiApp } from './setup.js';

// database-independent: realtime tokens; the flat charge is core/wallet's tests', on both.

const mint = (app: any, auth: any, payload: Record<string, unknown> = {}) =>
  app.inject({ method: 'POST', url: '/v1/ai/realtime/token', headers: auth, payload });

t.test("a live session token: the vendor's client secret, ICE servers, 1 h by default, a flat charge", async (t) => {
  const { app, oa, auth, accountId } = await aiApp(t);
  const before = await app.svc.wallet.balance(accountId);
  const started = Date.now();
  const res = await mint(app, auth);
  t.equal(res.statusCode, 200, res.body);
  const r = res.json();
  t.match(r, {
    session_id: /^sess_/,
    token: /^ek_/,
    ice_servers: [{ urls: 'stun:stun.l.google.com:19302' }],
    model: 'gpt-realtime',
    vendor: 'oa',
  });
  t.equal(r.token, oa.batches.secrets[0].value, "the token is the vendor's ephemeral secret");
  const ttl = (Date.parse(r.expires_at) - started) / 1000;
  t.ok(ttl > 3590 && ttl <= 3601, `expires in an hour (${ttl}s)`);
  t.same(oa.requests.at(-1)!.body, {
    expires_after: { anchor: 'created_at', seconds: 3600 },
    session: { type: 'realtime', model: 'gpt-realtime' },
  });
  t.equal(
    oa.requests.at(-1)!.headers.authorization,
    'Bearer sk-oa',
    'minted with the instance key, which the caller never sees'
  );
  // Default flat price 0.10 USD a token.
  t.equal(before - (await app.svc.wallet.balance(accountId)), 100_000);
  t.equal(res.headers['x-svc-cost-usd'], '0.100000');
  t.equal(res.headers['x-svc-vendor'], 'oa');

  const voiced = (await mint(app, auth, { model: 'gpt-realtime-mini', voice: 'marin', ttl_seconds: 60 })).json();
  t.equal(voiced.model, 'gpt-realtime-mini');
  t.same(oa.requests.at(-1)!.body, {
    expires_after: { anchor: 'created_at', seconds: 60 },
    session: { type: 'realtime', model: 'gpt-realtime-mini', audio: { output: { voice: 'marin' } } },
  });
  const long = (await mint(app, auth, { ttl_seconds: 86_400 })).json();
  t.equal(oa.requests.at(-1)!.body.expires_after.seconds, 7200, 'OpenAI caps a client secret at 2 h');
  t.ok(Date.parse(long.expires_at) - Date.now() <= 7200_000, 'expires_at says the real end');
});

t.test('ttl bounds and unknown fields are 400 and charge nothing; config sets price and ICE servers', async (t) => {
  const ice = [{ urls: ['turn:turn.example.com:3478'], username: 'u', credential: 'c' }];
  const { app, oa, auth, accountId } = await aiApp(t, {
    plugins: { ai: { realtime: { price_usd: 0.02, ice_servers: ice } } },
  });
  const before = await app.svc.wallet.balance(accountId);
  const calls = oa.requests.length;
  for (const payload of [
    { ttl_seconds: 59 },
    { ttl_seconds: 86_401 },
    { ttl_seconds: 'long' },
    { voice: '' },
    { nope: true },
  ]) {
    const res = await mint(app, auth, payload);
    t.equal(res.statusCode, 400, JSON.stringify(payload));
    t.equal(res.json().error.code, 'validation_failed');
  }
  t.equal(await app.svc.wallet.balance(accountId), before);
  t.equal(oa.requests.length, calls, 'no vendor called');
  const r = (await mint(app, auth, { ttl_seconds: 600 })).json();
  t.same(r.ice_servers, ice);
  t.equal(before - (await app.svc.wallet.balance(accountId)), 20_000);
  oa.next({ status: 500 });
  const failed = await mint(app, auth);
  t.equal(failed.statusCode, 502);
  t.equal(before - (await app.svc.wallet.balance(accountId)), 20_000, 'a failed mint is not charged');
});

t.test('no realtime vendor: 503 no_vendor_available', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const res = await mint(app, a.auth);
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'no_vendor_available');
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 5);
});

t.test('the token never reaches the log, even at trace level', async (t) => {
  const fake = await openAiFake({ key: 'sk-oa' }).start('/v1');
  t.teardown(() => fake.close());
  const { app, logged } = await traceLoggedApp(t, {
    vendors: [{ id: 'oa', use: 'openai', config: { api_key: 'sk-oa', base_url: fake.url } }],
  });
  const a = await activate(app);
  const r = (await mint(app, a.auth, { voice: 'marin' })).json();
  t.match(r.token, /^ek_/);
  t.ok(logged().includes('/v1/ai/realtime/token'), 'the request was logged');
  t.notOk(logged().includes(r.token), 'the token is not in the log');
  t.notOk(logged().includes('sk-oa'), 'nor the vendor key');
});
