import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';

const json = (auth: Record<string, string>, extra: Record<string, string> = {}) => ({
  ...auth,
  'content-type': 'application/json',
  ...extra,
});

t.test('create, read and list top-ups', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/account/topup',
    headers: json(a.auth),
    payload: { amount_usd: 12.34, return_url: 'https://example.com/back' },
  });
  t.equal(res.statusCode, 200);
  const top = res.json();
  t.match(top, { amount_usd: 12.34, currency: 'USD', state: 'pending', return_url: 'https://example.com/back' });
  t.equal(top.checkout_url, top.next_action_url);
  t.match(top.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.equal(Date.parse(top.expires_at) - Date.parse(top.created_at), 86400 * 1000, 'limits.topup_ttl_seconds');
  const row = await app.svc.db
    .selectFrom('topups')
    .selectAll()
    .where('topup_id', '=', top.topup_id)
    .executeTakeFirstOrThrow();
  t.equal(Number(row.amount_micros), 12_340_000);
  t.equal(row.vendor, 'sandbox-payments');
  t.equal(row.account_id, a.account_id);

  const got = await app.inject({ method: 'GET', url: `/v1/account/topups/${top.topup_id}`, headers: a.auth });
  t.same(got.json(), top);

  // Balance is untouched until the checkout is paid.
  t.equal((await app.inject({ method: 'GET', url: '/v1/account/balance', headers: a.auth })).json().balance_usd, 5);

  const ids = [top.topup_id];
  for (let i = 0; i < 4; i++) {
    const r = await app.inject({
      method: 'POST',
      url: '/v1/account/topup',
      headers: json(a.auth),
      payload: { amount_usd: 5 + i },
    });
    ids.push(r.json().topup_id);
  }
  const seen: { topup_id: string; created_at: string }[] = [];
  let cursor: string | null = null;
  do {
    const page: any = (
      await app.inject({
        method: 'GET',
        url: `/v1/account/topups?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        headers: a.auth,
      })
    ).json();
    t.ok(page.items.length <= 2);
    seen.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  t.same(seen.map((x) => x.topup_id).sort(), [...ids].sort(), 'every item once');
  // Two top-ups made in the same millisecond have no order between them, so check the times.
  t.ok(
    seen.every((x, i) => i === 0 || x.created_at <= seen[i - 1].created_at),
    'newest first'
  );
  t.equal(seen[seen.length - 1].topup_id, ids[0], 'the first one last');
});

t.test('an idempotency key makes a retry return the same top-up', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const first = await app.inject({
    method: 'POST',
    url: '/v1/account/topup',
    headers: json(a.auth),
    payload: { amount_usd: 30, idempotency_key: 'k1' },
  });
  const again = await app.inject({
    method: 'POST',
    url: '/v1/account/topup',
    headers: json(a.auth),
    payload: { amount_usd: 30, idempotency_key: 'k1' },
  });
  t.equal(again.statusCode, 200);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.same(again.json(), first.json());
  const viaHeader = await app.inject({
    method: 'POST',
    url: '/v1/account/topup',
    headers: json(a.auth, { 'idempotency-key': 'k2' }),
    payload: { amount_usd: 30 },
  });
  const viaHeader2 = await app.inject({
    method: 'POST',
    url: '/v1/account/topup',
    headers: json(a.auth, { 'idempotency-key': 'k2' }),
    payload: { amount_usd: 30 },
  });
  t.equal(viaHeader2.json().topup_id, viaHeader.json().topup_id);
  const reused = await app.inject({
    method: 'POST',
    url: '/v1/account/topup',
    headers: json(a.auth),
    payload: { amount_usd: 31, idempotency_key: 'k1' },
  });
  t.equal(reused.statusCode, 409);
  t.equal(reused.json().error.code, 'idempotency_key_reused');
  t.equal((await app.svc.db.selectFrom('topups').select('topup_id').execute()).length, 2);
});

t.test("another account's top-up is 404, and an unknown id too", async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const top = (
    await app.inject({ method: 'POST', url: '/v1/account/topup', headers: json(a.auth), payload: { amount_usd: 5 } })
  ).json();
  for (const id of [top.topup_id, 'top_doesnotexist']) {
    const res = await app.inject({ method: 'GET', url: `/v1/account/topups/${id}`, headers: b.auth });
    t.equal(res.statusCode, 404);
    t.equal(res.json().error.code, 'not_found');
  }
  t.same((await app.inject({ method: 'GET', url: '/v1/account/topups', headers: b.auth })).json(), {
    items: [],
    next_cursor: null,
  });
});

t.test('the top-up range comes from the config', async (t) => {
  const { app } = await makeApp(t, { wallet: { topup_min_usd: 1, topup_max_usd: 2 } });
  const a = await activate(app);
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/v1/account/topup',
        headers: json(a.auth),
        payload: { amount_usd: 1.5 },
      })
    ).statusCode,
    200
  );
  const over = await app.inject({
    method: 'POST',
    url: '/v1/account/topup',
    headers: json(a.auth),
    payload: { amount_usd: 3 },
  });
  t.equal(over.statusCode, 400);
  t.equal(over.json().error.param, 'amount_usd');
});
