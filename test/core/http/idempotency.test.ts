import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';

t.test('same key and body: stored response replayed, nothing done twice', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const send = (body: object, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/v1/account/keys', headers: { ...a.auth, ...headers }, payload: body });
  const first = await send({ label: 'ci', idempotency_key: 'k-1' });
  t.equal(first.statusCode, 200);
  t.notOk(first.headers['idempotent-replayed']);
  const again = await send({ idempotency_key: 'k-1', label: 'ci' });
  t.equal(again.statusCode, 200);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(again.json().key_id, first.json().key_id);
  t.equal(again.json().secret, first.json().secret);
  const keys = await app.svc.db
    .selectFrom('api_keys')
    .select('key_id')
    .where('account_id', '=', a.account_id)
    .execute();
  t.equal(keys.length, 2, 'primary + one created key');
  const stored = await app.svc.db
    .selectFrom('idempotency_keys')
    .select('response')
    .where('key', '=', 'k-1')
    .executeTakeFirstOrThrow();
  t.notOk(
    String(stored.response).includes(first.json().secret),
    'the stored response does not hold the secret in clear'
  );

  const reused = await send({ label: 'other', idempotency_key: 'k-1' });
  t.equal(reused.statusCode, 409);
  t.equal(reused.json().error.code, 'idempotency_key_reused');

  const viaHeader = await send({ label: 'hdr' }, { 'idempotency-key': 'h-1' });
  const viaHeader2 = await send({ label: 'hdr' }, { 'idempotency-key': 'h-1' });
  t.equal(viaHeader2.headers['idempotent-replayed'], 'true');
  t.equal(viaHeader2.json().key_id, viaHeader.json().key_id);
});

t.test('keys are scoped per account, and a rejected request stores nothing', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const ra = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: a.auth,
    payload: { label: 'x', idempotency_key: 'same' },
  });
  const rb = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: b.auth,
    payload: { label: 'x', idempotency_key: 'same' },
  });
  t.equal(rb.statusCode, 200);
  t.not(rb.json().key_id, ra.json().key_id);
  t.notOk(rb.headers['idempotent-replayed']);

  const bad = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: a.auth,
    payload: { label: '', idempotency_key: 'bad-1' },
  });
  t.equal(bad.statusCode, 400);
  const rows = await app.svc.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'bad-1').execute();
  t.equal(rows.length, 0);
  const good = await app.inject({
    method: 'POST',
    url: '/v1/account/keys',
    headers: a.auth,
    payload: { label: 'fixed', idempotency_key: 'bad-1' },
  });
  t.equal(good.statusCode, 200, 'the key is free after a rejected request');
});

t.test('concurrent retries: one runs, the others replay or wait', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const results = await Promise.all(
    Array.from({ length: 10 }, () =>
      app.inject({
        method: 'POST',
        url: '/v1/account/keys',
        headers: a.auth,
        payload: { label: 'race', idempotency_key: 'race-1' },
      })
    )
  );
  const ok = results.filter((r) => r.statusCode === 200);
  const busy = results.filter((r) => r.statusCode === 409);
  t.equal(ok.length + busy.length, 10);
  t.ok(busy.every((r) => r.json().error.code === 'idempotency_in_progress'));
  t.equal(new Set(ok.map((r) => r.json().key_id)).size, 1, 'every success is the same key');
  const keys = await app.svc.db
    .selectFrom('api_keys')
    .select('key_id')
    .where('account_id', '=', a.account_id)
    .where('label', '=', 'race')
    .execute();
  t.equal(keys.length, 1);
});
