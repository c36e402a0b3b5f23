import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { createBucket, presign, s3Client } from '../../helpers/storage-api.js';

t.test('buckets: create, list, names per account, S3 naming rules', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const made = await createBucket(app, a, 'assets', { acl: 'public' });
  t.same(
    { ...made, created_at: 'x' },
    { bucket: 'assets', vendor: 'local-storage', region: 'local', acl: 'public', created_at: 'x' }
  );
  t.match(made.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.equal((await createBucket(app, b, 'assets')).bucket, 'assets', 'another account may own the same name');
  const dup = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets',
    headers: a.auth,
    payload: { bucket: 'assets' },
  });
  t.equal(dup.statusCode, 409);
  t.equal(dup.json().error.code, 'already_exists');

  for (const bucket of [
    'ab',
    'Upper',
    'has_underscore',
    '-start',
    'end-',
    'two..dots',
    '192.168.1.1',
    'xn--punycode',
    'a'.repeat(64),
    'dot.-hyphen',
  ]) {
    const res = await app.inject({ method: 'POST', url: '/v1/storage/buckets', headers: a.auth, payload: { bucket } });
    t.equal(res.statusCode, 400, bucket);
    t.equal(res.json().error.param, 'bucket', bucket);
  }
  const unknown = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets',
    headers: a.auth,
    payload: { bucket: 'fine-name', colour: 'red' },
  });
  t.equal(unknown.statusCode, 400);
  const badAcl = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets',
    headers: a.auth,
    payload: { bucket: 'fine-name', acl: 'world' },
  });
  t.equal(badAcl.statusCode, 400);
  const noVendor = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets',
    headers: a.auth,
    payload: { bucket: 'fine-name', vendor: 'nope' },
  });
  t.equal(noVendor.statusCode, 503);
  t.equal(noVendor.json().error.code, 'no_vendor_available');

  for (const n of ['b-one', 'b-two', 'b-three']) await createBucket(app, a, n);
  const p1 = (await app.inject({ method: 'GET', url: '/v1/storage/buckets?limit=2', headers: a.auth })).json();
  t.same(
    p1.items.map((x: any) => x.bucket),
    ['b-three', 'b-two']
  );
  const p2 = (
    await app.inject({ method: 'GET', url: `/v1/storage/buckets?limit=2&cursor=${p1.next_cursor}`, headers: a.auth })
  ).json();
  t.same(
    p2.items.map((x: any) => x.bucket),
    ['b-one', 'assets']
  );
  t.equal(p2.next_cursor, null);
  const listB = (await app.inject({ method: 'GET', url: '/v1/storage/buckets', headers: b.auth })).json();
  t.same(
    listB.items.map((x: any) => x.bucket),
    ['assets']
  );
  const rows = await app.svc.db.selectFrom('storage_buckets').select('name').execute();
  t.equal(rows.length, 5, 'rejected requests wrote nothing');
});

t.test("another account's bucket is 404 everywhere", async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const b = await activate(app);
  await createBucket(app, a, 'private-a');
  const calls = [
    presign(app, b, 'private-a', 'x.txt', { method: 'GET' }),
    app.inject({ method: 'DELETE', url: '/v1/storage/buckets/private-a/objects/x.txt', headers: b.auth }),
    app.inject({ method: 'GET', url: '/v1/storage/buckets/private-a/objects', headers: b.auth }),
    app.inject({ method: 'GET', url: '/v1/storage/buckets/private-a/objects/x.txt', headers: b.auth }),
    app.inject({ method: 'DELETE', url: '/v1/storage/buckets/private-a', headers: b.auth }),
  ];
  for (const res of await Promise.all(calls)) {
    t.equal(res.statusCode, 404, res.body);
    t.equal(res.json().error.code, 'not_found');
  }
});

t.test('presign: validation, keys with .. rejected, defaults', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'keys-bucket');
  const def = await presign(app, a, 'keys-bucket', 'a/b/c.txt', {});
  t.equal(def.statusCode, 200);
  t.equal(def.json().method, 'PUT');
  t.match(def.json().url, /^http:\/\/127\.0\.0\.1:8787\/s3\/keys-bucket\/a\/b\/c\.txt\?.*X-Amz-Expires=900/);
  const noBody = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets/keys-bucket/objects/x/presign',
    headers: a.auth,
  });
  t.equal(noBody.statusCode, 200, noBody.body);

  for (const body of [
    { method: 'DELETE' },
    { expires_seconds: 0 },
    { expires_seconds: 604801 },
    { expires_seconds: 1.5 },
    { extra: true },
  ]) {
    const res = await presign(app, a, 'keys-bucket', 'k', body);
    t.equal(res.statusCode, 400, JSON.stringify(body));
  }
  // Keys travel as one path segment, "/" as %2F.
  for (const raw of [
    '..%2Fescape',
    'a%2F..%2Fb',
    '..%2F..%2Fetc%2Fpasswd',
    'a%2F%2Fb',
    '%2Fabs',
    'trailing%2F',
    'ctl%01x',
    `${'k'.repeat(1025)}`,
  ]) {
    const res = await app.inject({
      method: 'POST',
      url: `/v1/storage/buckets/keys-bucket/objects/${raw}/presign`,
      headers: a.auth,
      payload: {},
    });
    t.equal(res.statusCode, 400, raw.slice(0, 20));
    t.equal(res.json().error.param, 'key');
  }
  const wrongPath = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets/keys-bucket/objects/k',
    headers: a.auth,
    payload: {},
  });
  t.equal(wrongPath.statusCode, 405, 'the object path takes GET and DELETE; presign is …/presign');
  const longest = await presign(app, a, 'keys-bucket', `${'é'.repeat(511)}x`, {});
  t.equal(longest.statusCode, 200, 'a 1,023-byte key (3,000 characters encoded) is one path parameter');
  const literalSlash = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets/keys-bucket/objects/a/b/presign',
    headers: a.auth,
    payload: {},
  });
  t.equal(literalSlash.statusCode, 404, 'a literal "/" in the key is another path; keys carry it as %2F');
  const encoded = await presign(app, a, 'keys-bucket', 'a/b/c.txt', {});
  t.match(encoded.json().url, /\/s3\/keys-bucket\/a\/b\/c\.txt\?/, 'the S3 URL has the key with its slashes');
  const missing = await presign(app, a, 'no-such-bucket', 'k', {});
  t.equal(missing.statusCode, 404);
});

t.test('objects: list with prefix and cursor, head, delete, delete bucket when empty', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'objs');
  const store = app.svc.vendors.get('local-storage')!.instance.capabilities['storage.object.put'];
  const { Readable } = await import('node:stream');
  for (const key of ['p/1', 'p/2', 'p/3', 'q/1']) {
    await store.invoke(
      {
        account: a.account_id,
        bucket: 'objs',
        key,
        body: Readable.from([Buffer.from(key)]),
        content_type: 'text/plain',
      },
      { signal: new AbortController().signal, deadline: Date.now() + 1000 }
    );
  }
  const p1 = (
    await app.inject({ method: 'GET', url: '/v1/storage/buckets/objs/objects?prefix=p/&limit=2', headers: a.auth })
  ).json();
  t.same(
    p1.items.map((o: any) => o.key),
    ['p/1', 'p/2']
  );
  t.same(Object.keys(p1.items[0]).sort(), ['content_type', 'etag', 'key', 'last_modified', 'size']);
  const p2 = (
    await app.inject({
      method: 'GET',
      url: `/v1/storage/buckets/objs/objects?prefix=p/&limit=2&cursor=${p1.next_cursor}`,
      headers: a.auth,
    })
  ).json();
  t.same(
    p2.items.map((o: any) => o.key),
    ['p/3']
  );
  t.equal(p2.next_cursor, null);
  const badCursor = await app.inject({
    method: 'GET',
    url: '/v1/storage/buckets/objs/objects?cursor=zzz',
    headers: a.auth,
  });
  t.equal(badCursor.statusCode, 400);

  const head = await app.inject({ method: 'GET', url: '/v1/storage/buckets/objs/objects/q%2F1', headers: a.auth });
  t.equal(head.json().size, 3);
  const notEmpty = await app.inject({ method: 'DELETE', url: '/v1/storage/buckets/objs', headers: a.auth });
  t.equal(notEmpty.statusCode, 409);
  for (const key of ['p/1', 'p/2', 'p/3', 'q/1']) {
    const del = await app.inject({
      method: 'DELETE',
      url: `/v1/storage/buckets/objs/objects/${encodeURIComponent(key)}`,
      headers: a.auth,
    });
    t.same(del.json(), { ok: true });
  }
  const again = await app.inject({ method: 'DELETE', url: '/v1/storage/buckets/objs/objects/p%2F1', headers: a.auth });
  t.same(again.json(), { ok: true }, 'deleting a missing key is not an error, as in S3');
  const gone = await app.inject({ method: 'GET', url: '/v1/storage/buckets/objs/objects/q%2F1', headers: a.auth });
  t.equal(gone.statusCode, 404);
  const del = await app.inject({ method: 'DELETE', url: '/v1/storage/buckets/objs', headers: a.auth });
  t.same(del.json(), { ok: true });
  t.equal(
    (await app.inject({ method: 'GET', url: '/v1/storage/buckets/objs/objects', headers: a.auth })).statusCode,
    404
  );
});

t.test('the object list takes limit up to 200, as every list; S3 max-keys stays 1,000', async (t) => {
  const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const { app } = await listeningApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'limits');
  const list = (q: string) =>
    app.inject({ method: 'GET', url: `/v1/storage/buckets/limits/objects?${q}`, headers: a.auth });
  t.equal((await list('limit=200')).statusCode, 200);
  for (const q of ['limit=201', 'limit=1000', 'limit=0']) {
    const res = await list(q);
    t.equal(res.statusCode, 400, q);
    t.equal(res.json().error.code, 'validation_failed', q);
  }
  const s3 = await s3Client(t, app, a);
  const page = await s3.send(new ListObjectsV2Command({ Bucket: 'limits', MaxKeys: 1000 }));
  t.equal(page.MaxKeys, 1000);
});

t.test('S3 credentials: secret shown once, stored encrypted, listed without it, revocable', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/storage/credentials',
    headers: a.auth,
    payload: { label: 'rclone' },
  });
  t.equal(res.statusCode, 200);
  const c = res.json();
  t.match(c.access_key_id, /^SVC[A-Z0-9]{17}$/);
  t.match(c.secret_access_key, /^[0-9A-Za-z]{40}$/);
  t.equal(c.endpoint, 'http://127.0.0.1:8787/s3');
  const row = await app.svc.db
    .selectFrom('storage_credentials')
    .selectAll()
    .where('access_key_id', '=', c.access_key_id)
    .executeTakeFirstOrThrow();
  t.notOk(row.secret_enc.includes(c.secret_access_key), 'not stored in clear');
  const list = (await app.inject({ method: 'GET', url: '/v1/storage/credentials', headers: a.auth })).json();
  t.same(
    list.items.map((i: any) => [i.access_key_id, i.label]),
    [[c.access_key_id, 'rclone']]
  );
  t.notOk(JSON.stringify(list).includes(c.secret_access_key));
  const b = await activate(app);
  const foreign = await app.inject({
    method: 'DELETE',
    url: `/v1/storage/credentials/${c.access_key_id}`,
    headers: b.auth,
  });
  t.equal(foreign.statusCode, 404);
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/v1/storage/credentials/${c.access_key_id}`, headers: a.auth }))
      .statusCode,
    200
  );
  t.same((await app.inject({ method: 'GET', url: '/v1/storage/credentials', headers: a.auth })).json().items, []);
});

t.test('S3 credentials list: limit, cursor, newest first, unknown fields 400', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const made: string[] = [];
  for (let i = 0; i < 5; i++) {
    made.push(
      (
        await app.inject({
          method: 'POST',
          url: '/v1/storage/credentials',
          headers: a.auth,
          payload: { label: `k${i}` },
        })
      ).json().access_key_id
    );
    await new Promise((r) => setTimeout(r, 2));
  }
  await app.inject({ method: 'DELETE', url: `/v1/storage/credentials/${made[2]}`, headers: a.auth });
  const list = (q: string) => app.inject({ method: 'GET', url: `/v1/storage/credentials?${q}`, headers: a.auth });
  const p1 = (await list('limit=2')).json();
  t.same(
    p1.items.map((i: any) => i.label),
    ['k4', 'k3']
  );
  t.type(p1.next_cursor, 'string');
  const p2 = (await list(`limit=2&cursor=${p1.next_cursor}`)).json();
  t.same(
    p2.items.map((i: any) => i.label),
    ['k1', 'k0'],
    'the revoked one is not listed'
  );
  t.equal(p2.next_cursor, null);
  t.equal((await list('')).json().items.length, 4, 'default limit 50');
  for (const q of ['limit=201', 'limit=0', 'colour=red', 'cursor=zzz']) {
    const res = await list(q);
    t.equal(res.statusCode, 400, q);
    t.equal(res.json().error.code, 'validation_failed', q);
  }
});

t.test(
  'idempotency_key in the body of the idempotent storage POSTs: a replay returns the first response',
  async (t) => {
    const { app } = await makeApp(t);
    const a = await activate(app);
    const post = (url: string, payload: Record<string, unknown>) =>
      app.inject({ method: 'POST', url, headers: a.auth, payload });
    const b1 = await post('/v1/storage/buckets', { bucket: 'once', idempotency_key: 'bkt-1' });
    t.equal(b1.statusCode, 200, b1.body);
    const b2 = await post('/v1/storage/buckets', { idempotency_key: 'bkt-1', bucket: 'once' });
    t.equal(b2.statusCode, 200, 'not 409 already_exists: the stored response');
    t.equal(b2.headers['idempotent-replayed'], 'true');
    t.same(b2.json(), b1.json());
    t.equal(
      (await post('/v1/storage/buckets', { bucket: 'other', idempotency_key: 'bkt-1' })).json().error.code,
      'idempotency_key_reused'
    );
    t.equal(
      (await app.svc.db.selectFrom('storage_buckets').select('name').where('account_id', '=', a.account_id).execute())
        .length,
      1
    );

    const c1 = await post('/v1/storage/credentials', { label: 'ci', idempotency_key: 'cred-1' });
    t.equal(c1.statusCode, 200, c1.body);
    const c2 = await post('/v1/storage/credentials', { label: 'ci', idempotency_key: 'cred-1' });
    t.equal(c2.headers['idempotent-replayed'], 'true');
    t.equal(
      c2.json().secret_access_key,
      c1.json().secret_access_key,
      'a replay returns the same secret, once per credential'
    );
    t.same(
      (await app.inject({ method: 'GET', url: '/v1/storage/credentials', headers: a.auth }))
        .json()
        .items.map((i: any) => i.access_key_id),
      [c1.json().access_key_id]
    );
    t.equal(
      (await post('/v1/storage/credentials', { idempotency_key: '' })).statusCode,
      400,
      'an empty key is refused'
    );
  }
);

t.test('a storage:read key lists but does not write', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  await createBucket(app, a, 'scoped');
  const k = (
    await app.inject({
      method: 'POST',
      url: '/v1/account/keys',
      headers: a.auth,
      payload: { label: 'ro', scopes: ['storage:read'] },
    })
  ).json();
  const ro = { authorization: `Bearer ${k.secret}` };
  t.equal((await app.inject({ method: 'GET', url: '/v1/storage/buckets', headers: ro })).statusCode, 200);
  const w = await app.inject({
    method: 'POST',
    url: '/v1/storage/buckets',
    headers: ro,
    payload: { bucket: 'nope-nope' },
  });
  t.equal(w.statusCode, 403);
  t.equal((await presign(app, { ...a, auth: ro }, 'scoped', 'k', {})).statusCode, 403);
});
