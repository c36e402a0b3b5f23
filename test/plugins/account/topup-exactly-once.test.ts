import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { checkExactlyOnce } from '../../helpers/exactly-once.js';
import { VendorFailure } from '../../../core/kit/vendor.js';

// Issue 27: a top-up's record commits with its stored answer, and its checkout (an effect at
// the payments vendor) is recorded on the idempotency claim before it is opened, so the retry
// of a request that died after opening it opens the same top-up again, under the same id.

const topup = (auth: Record<string, string>, amount: number) => (key: string) => ({
  method: 'POST' as const,
  url: '/v1/account/topup',
  headers: auth,
  payload: { amount_usd: amount, idempotency_key: key },
});

t.test('POST /v1/account/topup is exactly once', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  await checkExactlyOnce(t, app, {
    request: topup(a.auth, 20),
    other: topup(a.auth, 21),
    state: () =>
      app.svc.db
        .selectFrom('topups')
        .select(['topup_id', 'amount_micros'])
        .where('account_id', '=', a.account_id)
        .execute(),
    answered: (t, body) => t.match(body, { topup_id: /^top_/, amount_usd: 20, state: 'pending' }),
  });
});

t.test('the retry of a request that died after opening its checkout opens the same top-up', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const first = await app.inject(topup(a.auth, 20)('died-1'));
  t.equal(first.statusCode, 200, first.body);
  const { topup_id } = first.json();
  // What a node killed between the checkout and the commit leaves: the claim still running,
  // its attempt recorded, its lease lapsed; no top-up row, no answer.
  const claim = () =>
    app.svc.db.selectFrom('idempotency_keys').selectAll().where('key', '=', 'died-1').executeTakeFirstOrThrow();
  t.same(JSON.parse((await claim()).attempt), { topup_id }, 'the attempt was recorded on the claim');
  await app.svc.db
    .updateTable('idempotency_keys')
    .set({ state: 'running', status: null, response: null, owner: 'dead-node', lease_until: 0 })
    .where('key', '=', 'died-1')
    .execute();
  await app.svc.db.deleteFrom('topups').where('topup_id', '=', topup_id).execute();

  const retry = await app.inject(topup(a.auth, 20)('died-1'));
  t.equal(retry.statusCode, 200, retry.body);
  t.equal(retry.headers['idempotent-replayed'], undefined, 'run again, not replayed');
  t.equal(retry.json().topup_id, topup_id, 'the same top-up: the vendor got the same reference');
  const rows = await app.svc.db
    .selectFrom('topups')
    .select('topup_id')
    .where('account_id', '=', a.account_id)
    .execute();
  t.same(rows, [{ topup_id }], 'one top-up');
  t.equal((await claim()).state, 'done');
});

t.test('a checkout the vendor opened before timing out is the one the retry reaches', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const impl = app.svc.vendors.serving('payments.checkout')[0].instance.capabilities['payments.checkout'] as any;
  const invoke = impl.invoke;
  const opened: any[] = [];
  // The vendor acts, then its answer is lost: what the gateway sees is a timeout.
  impl.invoke = async (input: any, opts: any) => {
    opened.push(await invoke.call(impl, input, opts));
    throw new VendorFailure('timeout', 'the answer was lost after the checkout was opened');
  };
  t.teardown(() => {
    impl.invoke = invoke;
  });
  const first = await app.inject(topup(a.auth, 20)('lost-1'));
  t.equal(first.statusCode, 504, first.body);
  t.equal(opened.length, 1, 'the vendor opened a checkout');
  impl.invoke = async (input: any, opts: any) => {
    const out = await invoke.call(impl, input, opts);
    opened.push(out);
    return out;
  };

  const other = await app.inject(topup(a.auth, 21)('lost-1'));
  t.equal(other.statusCode, 409, 'the key stays bound to its request while its attempt may exist');
  t.equal(other.json().error.code, 'idempotency_key_reused');

  const retry = await app.inject(topup(a.auth, 20)('lost-1'));
  t.equal(retry.statusCode, 200, retry.body);
  const checkout = retry.json();
  t.same(opened[1], opened[0], 'the vendor returned the checkout it opened, not a second one');
  t.equal(checkout.checkout_url, opened[0].checkout_url, 'the retry answers with that checkout');
  const rows = await app.svc.db
    .selectFrom('topups')
    .select(['topup_id', 'session_id'])
    .where('account_id', '=', a.account_id)
    .execute();
  t.same(rows, [{ topup_id: checkout.topup_id, session_id: opened[0].session_id }], 'one top-up, on that session');
  const again = await app.inject(topup(a.auth, 20)('lost-1'));
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(opened.length, 2, 'a replay reaches no vendor');
});

t.test('the sandbox vendor: one checkout per idempotency key, other terms refused', async (t) => {
  const { app } = await makeApp(t);
  const impl = app.svc.vendors.serving('payments.checkout')[0].instance.capabilities['payments.checkout'] as any;
  const input = { topup_id: 'top_x', idempotency_key: 'top_x', amount_usd: 5, currency: 'USD', description: 'x' };
  const opts = { signal: AbortSignal.timeout(5000), deadline: Date.now() + 5000 };
  const one = await impl.invoke(input, opts);
  t.same(await impl.invoke({ ...input, expires_at: Date.now() }, opts), one, 'the same key: the same checkout');
  t.not((await impl.invoke({ ...input, idempotency_key: 'top_y' }, opts)).session_id, one.session_id, 'another key');
  await t.rejects(impl.invoke({ ...input, amount_usd: 6 }, opts), { kind: 'client_error' }, 'other terms');
});
