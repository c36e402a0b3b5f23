import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { checkExactlyOnce } from '../../helpers/exactly-once.js';

// Issue 27: a bucket's row and an S3 credential commit with their stored answer, so a retry
// never records a second credential (whose secret nobody saw), nor answers 409 already_exists
// for the bucket its lost answer created.

t.test('POST /v1/storage/buckets is exactly once', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const create = (bucket: string) => (key: string) => ({
    method: 'POST' as const,
    url: '/v1/storage/buckets',
    headers: a.auth,
    payload: { bucket, idempotency_key: key },
  });
  await checkExactlyOnce(t, app, {
    request: create('once'),
    other: create('twice'),
    state: () =>
      app.svc.db
        .selectFrom('storage_buckets')
        .select(['bucket_id', 'name'])
        .where('account_id', '=', a.account_id)
        .execute(),
    answered: (t, body) => t.match(body, { bucket: 'once', vendor: 'local-storage', acl: 'private' }),
  });
  const list = await app.inject({ method: 'GET', url: '/v1/storage/buckets', headers: a.auth });
  t.same(
    list.json().items.map((b: any) => b.bucket),
    ['once'],
    'one bucket, though the vendor was asked twice'
  );
});

t.test('POST /v1/storage/credentials is exactly once', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const create = (label: string) => (key: string) => ({
    method: 'POST' as const,
    url: '/v1/storage/credentials',
    headers: a.auth,
    payload: { label, idempotency_key: key },
  });
  await checkExactlyOnce(t, app, {
    request: create('ci'),
    other: create('deploy'),
    state: () =>
      app.svc.db
        .selectFrom('storage_credentials')
        .select(['access_key_id', 'label'])
        .where('account_id', '=', a.account_id)
        .where('kind', '=', 'user')
        .execute(),
    answered: (t, body) => t.match(body, { label: 'ci', access_key_id: /^SVC/, secret_access_key: /\w{40}/ }),
  });
});
