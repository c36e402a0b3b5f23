import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { checkExactlyOnce } from '../../helpers/exactly-once.js';

// Issue 27: a key created or rotated under an idempotency key commits with its stored answer,
// so a retry never makes a second key (whose secret nobody saw) under a new id.

t.test('POST /v1/account/keys is exactly once', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  await checkExactlyOnce(t, app, {
    request: (key) => ({
      method: 'POST',
      url: '/v1/account/keys',
      headers: a.auth,
      payload: { label: 'ci', idempotency_key: key },
    }),
    other: (key) => ({
      method: 'POST',
      url: '/v1/account/keys',
      headers: a.auth,
      payload: { label: 'deploy', idempotency_key: key },
    }),
    state: () =>
      app.svc.db.selectFrom('api_keys').select(['key_id', 'label']).where('account_id', '=', a.account_id).execute(),
    answered: (t, body) => t.match(body, { label: 'ci', secret: /^sk_live_/ }),
  });
});

t.test('POST /v1/account/keys/:key_id/rotate is exactly once', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const mk = async (label: string) =>
    (await app.inject({ method: 'POST', url: '/v1/account/keys', headers: a.auth, payload: { label } })).json().key_id;
  const [k1, k2] = [await mk('one'), await mk('two')];
  const rotate = (keyId: string) => (key: string) => ({
    method: 'POST' as const,
    url: `/v1/account/keys/${keyId}/rotate`,
    headers: { ...a.auth, 'idempotency-key': key },
  });
  await checkExactlyOnce(t, app, {
    request: rotate(k1),
    other: rotate(k2),
    state: () =>
      app.svc.db
        .selectFrom('api_keys')
        .select(['key_id', 'replaced_by', 'expires_at', 'revoked_at'])
        .where('account_id', '=', a.account_id)
        .orderBy('key_id')
        .execute(),
    answered: (t, body) => t.match(body, { old_key_id: k1, secret: /^sk_live_/ }),
  });
});
