import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';

const tiers = {
  free: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 0 },
  pro: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 3 },
  max: { rate_per_minute: 1_000_000, burst: 100_000, price_usd: 50 },
};

async function ledger(app: any, accountId: string) {
  return app.svc.db
    .selectFrom('wallet_ledger')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('kind', '=', 'tier')
    .execute();
}

t.test('upgrade debits the price, moves the tier, returns the AccountSummary', async (t) => {
  const { app } = await makeApp(t, { tiers });
  const a = await activate(app);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/account/tier/upgrade',
    headers: a.auth,
    payload: { target_tier: 'pro' },
  });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { account_id: a.account_id, kind: 'anonymous', status: 'active', tier: 'pro', balance_usd: 2 });
  const l = await ledger(app, a.account_id);
  t.equal(l.length, 1);
  t.equal(Number(l[0].amount_micros), -3_000_000);

  const same = await app.inject({
    method: 'POST',
    url: '/v1/account/tier/upgrade',
    headers: a.auth,
    payload: { target_tier: 'pro' },
  });
  t.equal(same.statusCode, 409);
  t.equal(same.json().error.code, 'invalid_state');

  // Back to a cheaper tier: costs that tier's price (0), refunds nothing (docs/account.md).
  const down = await app.inject({
    method: 'POST',
    url: '/v1/account/tier/upgrade',
    headers: a.auth,
    payload: { target_tier: 'free' },
  });
  t.equal(down.statusCode, 200);
  t.match(down.json(), { tier: 'free', balance_usd: 2 });
});

t.test('unknown tier is 400 and an unaffordable one is 402; neither changes anything', async (t) => {
  const { app } = await makeApp(t, { tiers });
  const a = await activate(app);
  for (const target of ['gold', 'constructor', '__proto__']) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/account/tier/upgrade',
      headers: a.auth,
      payload: { target_tier: target },
    });
    t.equal(res.statusCode, 400, target);
    t.equal(res.json().error.code, 'validation_failed');
    t.equal(res.json().error.param, 'target_tier');
    t.same(
      res.json().error.details.errors.map((e: any) => e.param),
      ['target_tier']
    );
  }
  const poor = await app.inject({
    method: 'POST',
    url: '/v1/account/tier/upgrade',
    headers: a.auth,
    payload: { target_tier: 'max' },
  });
  t.equal(poor.statusCode, 402);
  t.equal(poor.json().error.code, 'insufficient_balance');
  const acct = (await app.inject({ method: 'GET', url: '/v1/account', headers: a.auth })).json();
  t.match(acct, { tier: 'free', balance_usd: 5 });
  t.equal((await ledger(app, a.account_id)).length, 0);
});

t.test('concurrent upgrades to the same tier pay once', async (t) => {
  const { app } = await makeApp(t, { tiers });
  const a = await activate(app);
  const codes = await Promise.all(
    Array.from({ length: 8 }, () =>
      app
        .inject({ method: 'POST', url: '/v1/account/tier/upgrade', headers: a.auth, payload: { target_tier: 'pro' } })
        .then((r) => r.statusCode)
    )
  );
  t.equal(codes.filter((c) => c === 200).length, 1, codes.join(','));
  t.ok(codes.every((c) => c === 200 || c === 409));
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 2);
  t.equal((await ledger(app, a.account_id)).length, 1);
});

t.test('the new rate limit applies at once after an upgrade', async (t) => {
  const { app } = await makeApp(t, {
    tiers: {
      small: { rate_per_minute: 1, burst: 3, price_usd: 0 },
      big: { rate_per_minute: 600_000, burst: 1000, price_usd: 1 },
    },
    default_tier: 'small',
  });
  const a = await activate(app);
  // A second key of the same account has its own bucket, so it can still ask for the upgrade.
  const second = (
    await app.inject({ method: 'POST', url: '/v1/account/keys', headers: a.auth, payload: { label: 'ops' } })
  ).json();
  const b = { authorization: `Bearer ${second.secret}` };
  for (let i = 0; i < 2; i++)
    t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).statusCode, 200);
  const limited = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
  t.equal(limited.statusCode, 429);
  t.equal(limited.json().error.code, 'rate_limited');
  t.ok(Number(limited.headers['retry-after']) >= 1);
  t.equal(limited.headers['ratelimit-limit'], '3');
  t.equal(limited.headers['ratelimit-remaining'], '0');
  t.ok(limited.headers['ratelimit-reset']);
  t.match(limited.headers['ratelimit-policy'], /^1;w=60;burst=3$/);

  const up = await app.inject({
    method: 'POST',
    url: '/v1/account/tier/upgrade',
    headers: b,
    payload: { target_tier: 'big' },
  });
  t.equal(up.statusCode, 200);
  t.equal(up.json().tier, 'big');
  // The key cache held tier "small" for the first key; the upgrade dropped it.
  for (let i = 0; i < 20; i++) {
    const r = await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth });
    t.equal(r.statusCode, 200, `call ${i}`);
    if (i === 19) t.equal(r.headers['ratelimit-limit'], '1000');
  }
});
