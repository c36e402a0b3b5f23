import t from 'tap';
import { activate, makeApp } from '../../helpers/app.js';
import { traceLoggedApp } from '../../helpers/trace-logged-app.js';
import { openAiFake } from '../../fakes/openai-fake.js';

// database-independent: realtime tokens with BYOK; the BYOK rows are plugins/byok/byok.test.ts's, on both.

const OPERATOR = 'sk-operator-key-0001';
const CALLER = 'sk-caller-own-key-0002';
const FEE = 5; // plugins.byok.platform_fee_usd 0.000005, in micro-USD

const mint = (app: any, auth: any, payload: Record<string, unknown> = {}) =>
  app.inject({ method: 'POST', url: '/v1/ai/realtime/token', headers: auth, payload });
const byok = (app: any, auth: any, key = CALLER) =>
  app.inject({
    method: 'POST',
    url: '/v1/byok',
    headers: auth,
    payload: { provider: 'openai', alias: 'mine', credentials: { api_key: key } },
  });

/** An OpenAI fake that takes any key, so the test sees whose key each mint was sent with. */
async function realtimeApp(t: any, apiKey = OPERATOR) {
  const oa = await openAiFake().start('/v1');
  t.teardown(() => oa.close());
  const { app } = await makeApp(t, {
    vendors: [{ id: 'oa', use: 'openai', config: { api_key: apiKey, base_url: oa.url } }],
    plugins: { byok: { platform_fee_usd: 0.000005 } },
  });
  const a = await activate(app);
  return { app, oa, auth: a.auth, accountId: a.account_id };
}

const lastAuth = (oa: any) => oa.requests.at(-1)!.headers.authorization;

t.test(
  "the caller's own key mints the token and only the platform fee is charged; without one, the operator's key at the realtime price",
  async (t) => {
    const { app, oa, auth, accountId } = await realtimeApp(t);
    let bal = await app.svc.wallet.balance(accountId);
    const plain = await mint(app, auth);
    t.equal(plain.statusCode, 200, plain.body);
    t.match(plain.json(), { vendor: 'oa', byok: false, token: /^ek_/ });
    t.equal(lastAuth(oa), `Bearer ${OPERATOR}`);
    t.equal(bal - (await app.svc.wallet.balance(accountId)), 100_000, 'the configured 0.10 USD');

    const k = (await byok(app, auth)).json();
    bal = await app.svc.wallet.balance(accountId);
    const own = await mint(app, auth, { voice: 'marin' });
    t.equal(own.statusCode, 200, own.body);
    t.match(own.json(), { vendor: 'oa', byok: true, model: 'gpt-realtime' });
    t.equal(own.json().token, oa.batches.secrets.at(-1)!.value);
    t.equal(lastAuth(oa), `Bearer ${CALLER}`, "the vendor saw the caller's key, not the operator's");
    t.equal(bal - (await app.svc.wallet.balance(accountId)), FEE, 'the platform fee, not the realtime price');
    t.equal(own.headers['x-svc-cost-usd'], '0.000005');
    for (const res of [plain, own]) {
      t.notOk(res.body.includes(CALLER) || res.body.includes(OPERATOR), 'no key in the response');
      t.notOk(JSON.stringify(res.headers).includes(CALLER), 'nor in its headers');
    }

    // Another account never gets this account's key.
    const other = await activate(app);
    await mint(app, other.auth);
    t.equal(lastAuth(oa), `Bearer ${OPERATOR}`);

    // A key whose test failed is invalid, and never used; a passing test makes it active again.
    oa.next({ status: 401 });
    t.equal((await app.inject({ method: 'POST', url: `/v1/byok/${k.byok_id}/test`, headers: auth })).json().ok, false);
    bal = await app.svc.wallet.balance(accountId);
    t.equal((await mint(app, auth)).json().byok, false);
    t.equal(lastAuth(oa), `Bearer ${OPERATOR}`, 'an invalid key is not used');
    t.equal(bal - (await app.svc.wallet.balance(accountId)), 100_000);
    t.equal((await app.inject({ method: 'POST', url: `/v1/byok/${k.byok_id}/test`, headers: auth })).json().ok, true);
    t.equal((await mint(app, auth)).json().byok, true);
    t.equal(lastAuth(oa), `Bearer ${CALLER}`);

    await app.inject({ method: 'DELETE', url: `/v1/byok/${k.byok_id}`, headers: auth });
    t.equal((await mint(app, auth)).json().byok, false);
    t.equal(lastAuth(oa), `Bearer ${OPERATOR}`, 'a revoked key is never used');
  }
);

t.test(
  "a vendor rejecting the caller's key: 502, nothing charged, the operator's key not tried in its place",
  async (t) => {
    const { app, oa, auth, accountId } = await realtimeApp(t);
    await byok(app, auth);
    const bal = await app.svc.wallet.balance(accountId);
    const seen = oa.requests.length;
    oa.next({ status: 401 });
    const res = await mint(app, auth);
    t.equal(res.statusCode, 502, res.body);
    t.equal(res.json().error.code, 'vendor_error');
    t.notOk(res.body.includes(CALLER));
    t.equal(oa.requests.length, seen + 1, "one call, with the caller's key");
    t.equal(lastAuth(oa), `Bearer ${CALLER}`);
    t.equal(await app.svc.wallet.balance(accountId), bal);
  }
);

t.test(
  'an instance without an operator key serves only callers with their own key; neither key nor token reaches the log',
  async (t) => {
    const oa = await openAiFake().start('/v1');
    t.teardown(() => oa.close());
    const { app, logged } = await traceLoggedApp(t, {
      vendors: [{ id: 'oa', use: 'openai', config: { api_key: '', base_url: oa.url } }],
      plugins: { byok: { platform_fee_usd: 0.000005 } },
    });
    const a = await activate(app);
    const none = await mint(app, a.auth);
    t.equal(none.statusCode, 503);
    t.equal(none.json().error.code, 'no_vendor_available');
    t.match(none.json().error.message, /POST \/v1\/byok/);
    t.equal(oa.requests.length, 0);

    await byok(app, a.auth);
    const res = await mint(app, a.auth);
    t.equal(res.statusCode, 200, res.body);
    const r = res.json();
    t.match(r, { byok: true, vendor: 'oa', token: /^ek_/ });
    t.equal(lastAuth(oa), `Bearer ${CALLER}`);
    t.equal(res.headers['x-svc-cost-usd'], '0.000005');
    t.ok(logged().includes('/v1/ai/realtime/token'), 'the request was logged');
    t.notOk(logged().includes(r.token), 'the token is not in the log');
    t.notOk(logged().includes(CALLER), "nor the caller's key");
  }
);
