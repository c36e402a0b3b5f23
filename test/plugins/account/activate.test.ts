import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';

t.test('activate creates an account with a key and 5 USD trial credit', async (t) => {
  const { app } = await makeApp(t);
  const res = await app.inject({ method: 'POST', url: '/v1/activate', payload: {} });
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.match(body.account_id, /^acct_/);
  t.match(body.project_id, /^proj_/);
  t.match(body.primary_api_key, /^sk_live_[0-9A-Za-z]{32}$/);
  t.equal(body.trial_credit_usd, 5);
  t.match(body.checkout_url, /^http:\/\/127\.0\.0\.1:8787\//);
  t.ok(res.headers['x-request-id']);

  const bal = await app.inject({
    method: 'GET',
    url: '/v1/account/balance',
    headers: { authorization: `Bearer ${body.primary_api_key}` },
  });
  t.equal(bal.statusCode, 200);
  t.same(bal.json(), { balance_usd: 5, currency: 'USD' });

  const viaHeader = await app.inject({
    method: 'GET',
    url: '/v1/account/balance',
    headers: { 'x-api-key': body.primary_api_key },
  });
  t.equal(viaHeader.statusCode, 200);
});

t.test('activate with a valid key returns the same account and no second credit', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const again = await app.inject({ method: 'POST', url: '/v1/activate', headers: a.auth, payload: {} });
  t.equal(again.statusCode, 200);
  t.equal(again.json().account_id, a.account_id);
  const bal = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  t.equal(bal.json().balance_usd, 5);
});

t.test('activate rejects bad input and writes nothing', async (t) => {
  const { app } = await makeApp(t);
  for (const payload of [{ region: 'mars' }, { write_credentials: 'yes' }, { nope: 1 }]) {
    const res = await app.inject({ method: 'POST', url: '/v1/activate', payload });
    t.equal(res.statusCode, 400, JSON.stringify(payload));
    const e = res.json().error;
    t.equal(e.code, 'validation_failed');
    t.ok(e.details.errors.length >= 1);
    t.ok(e.param);
    t.match(e.request_id, /^req_/);
  }
  const rows = await app.svc.db.selectFrom('accounts').select('account_id').execute();
  t.equal(rows.length, 0);
});

t.test('activation is rate limited per IP', async (t) => {
  const { app } = await makeApp(t, { limits: { activate_per_hour: 2 } });
  t.equal((await app.inject({ method: 'POST', url: '/v1/activate', payload: {} })).statusCode, 200);
  t.equal((await app.inject({ method: 'POST', url: '/v1/activate', payload: {} })).statusCode, 200);
  const third = await app.inject({ method: 'POST', url: '/v1/activate', payload: {} });
  t.equal(third.statusCode, 429);
  t.equal(third.json().error.code, 'rate_limited');
  t.ok(Number(third.headers['retry-after']) > 0);
});
