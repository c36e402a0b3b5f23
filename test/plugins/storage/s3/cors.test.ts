import t from 'tap';
import {
  DeleteBucketCommand,
  DeleteBucketCorsCommand,
  GetBucketCorsCommand,
  PutBucketCorsCommand,
  type CORSRule,
} from '@aws-sdk/client-s3';
import { activate, errorOf } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { createBucket, presign, s3Client } from '../../../helpers/storage-api.js';

const APP = 'https://app.example.com';
const RULES: CORSRule[] = [
  {
    ID: 'uploads',
    AllowedOrigins: [APP, 'https://*.example.org'],
    AllowedMethods: ['PUT', 'POST'],
    AllowedHeaders: ['content-type', 'x-amz-*'],
    ExposeHeaders: ['ETag'],
    MaxAgeSeconds: 60,
  },
  { AllowedOrigins: ['*'], AllowedMethods: ['GET'] },
];

const preflight = (url: string, origin: string | undefined, method: string | undefined, headers?: string) =>
  fetch(url, {
    method: 'OPTIONS',
    headers: {
      ...(origin ? { origin } : {}),
      ...(method ? { 'access-control-request-method': method } : {}),
      ...(headers ? { 'access-control-request-headers': headers } : {}),
    },
  });

const codeOf = async (res: Response) => /<Code>([^<]+)<\/Code>/.exec(await res.text())?.[1];

t.test('PutBucketCors, GetBucketCors, DeleteBucketCors with the AWS SDK', async (t) => {
  const { app } = await listeningApp(t);
  const a = await activate(app);
  const s3 = await s3Client(t, app, a);
  await createBucket(app, a, 'web');

  const none = await errorOf(s3.send(new GetBucketCorsCommand({ Bucket: 'web' })));
  t.equal(none.name, 'NoSuchCORSConfiguration', "the gateway default is not the bucket's configuration");
  t.equal(none.$metadata.httpStatusCode, 404);

  await s3.send(new PutBucketCorsCommand({ Bucket: 'web', CORSConfiguration: { CORSRules: RULES } }));
  const got = await s3.send(new GetBucketCorsCommand({ Bucket: 'web' }));
  t.same(got.CORSRules, [
    {
      ID: 'uploads',
      AllowedHeaders: ['content-type', 'x-amz-*'],
      AllowedMethods: ['PUT', 'POST'],
      AllowedOrigins: [APP, 'https://*.example.org'],
      ExposeHeaders: ['ETag'],
      MaxAgeSeconds: 60,
    },
    { AllowedMethods: ['GET'], AllowedOrigins: ['*'] },
  ]);

  const replaced: CORSRule[] = [{ AllowedOrigins: [APP], AllowedMethods: ['GET'] }];
  await s3.send(new PutBucketCorsCommand({ Bucket: 'web', CORSConfiguration: { CORSRules: replaced } }));
  t.same(
    (await s3.send(new GetBucketCorsCommand({ Bucket: 'web' }))).CORSRules,
    replaced,
    'a put replaces the whole configuration'
  );

  const bad = async (rules: CORSRule[]) =>
    errorOf(s3.send(new PutBucketCorsCommand({ Bucket: 'web', CORSConfiguration: { CORSRules: rules } })));
  const method = await bad([{ AllowedOrigins: [APP], AllowedMethods: ['PATCH'] }]);
  t.equal(method.name, 'InvalidRequest');
  t.match(method.message, /Unsupported method is PATCH/);
  const stars = await bad([{ AllowedOrigins: ['https://*.*.example.com'], AllowedMethods: ['GET'] }]);
  t.match(stars.message, /can not have more than one wildcard/);
  t.equal(
    (await bad([{ AllowedOrigins: [APP], AllowedMethods: ['GET'], ExposeHeaders: ['*'] }])).name,
    'InvalidRequest'
  );
  t.equal((await bad([{ AllowedOrigins: [], AllowedMethods: ['GET'] }])).name, 'MalformedXML');
  t.same(
    (await s3.send(new GetBucketCorsCommand({ Bucket: 'web' }))).CORSRules,
    replaced,
    'a refused put changes nothing'
  );

  const b = await activate(app);
  const other = await s3Client(t, app, b);
  t.equal(
    (await errorOf(other.send(new GetBucketCorsCommand({ Bucket: 'web' })))).name,
    'NoSuchBucket',
    'another account sees no such bucket'
  );
  t.equal(
    (await errorOf(other.send(new PutBucketCorsCommand({ Bucket: 'web', CORSConfiguration: { CORSRules: RULES } }))))
      .name,
    'NoSuchBucket'
  );

  await s3.send(new DeleteBucketCorsCommand({ Bucket: 'web' }));
  t.equal((await errorOf(s3.send(new GetBucketCorsCommand({ Bucket: 'web' })))).name, 'NoSuchCORSConfiguration');

  await s3.send(new PutBucketCorsCommand({ Bucket: 'web', CORSConfiguration: { CORSRules: RULES } }));
  await s3.send(new DeleteBucketCommand({ Bucket: 'web' }));
  t.equal(
    (await app.svc.db.selectFrom('storage_bucket_cors').selectAll().execute()).length,
    0,
    'the configuration goes with its bucket'
  );
  await createBucket(app, a, 'web');
  t.equal(
    (await errorOf(s3.send(new GetBucketCorsCommand({ Bucket: 'web' })))).name,
    'NoSuchCORSConfiguration',
    'a new bucket of the same name starts without one'
  );
});

t.test("preflights and actual requests: the default rule, then the bucket's own rules", async (t) => {
  const { app, base } = await listeningApp(t);
  const a = await activate(app);
  const s3 = await s3Client(t, app, a);
  await createBucket(app, a, 'uploads');
  const url = (await presign(app, a, 'uploads', 'photo.jpg', { method: 'PUT' })).json().url as string;

  // No configuration: the default lets any origin use the presigned URL.
  const open = await preflight(url, 'https://anything.example', 'PUT', 'content-type');
  t.equal(open.status, 200);
  t.equal(open.headers.get('access-control-allow-origin'), 'https://anything.example');
  t.match(open.headers.get('access-control-allow-methods'), /PUT/);
  t.equal(open.headers.get('access-control-allow-headers'), 'content-type');
  t.match(open.headers.get('access-control-expose-headers'), /ETag/);
  t.equal(open.headers.get('access-control-max-age'), '3600');

  const noOrigin = await preflight(url, undefined, 'PUT');
  t.equal(noOrigin.status, 400);
  t.equal(await codeOf(noOrigin), 'BadRequest');
  const noMethod = await preflight(url, APP, 'PATCH');
  t.equal(noMethod.status, 400);

  await s3.send(new PutBucketCorsCommand({ Bucket: 'uploads', CORSConfiguration: { CORSRules: RULES } }));
  const ok = await preflight(url, APP, 'PUT', 'Content-Type, x-amz-meta-owner');
  t.equal(ok.status, 200, "the bucket is found by the presigned URL's access key");
  t.equal(ok.headers.get('access-control-allow-origin'), APP);
  t.equal(ok.headers.get('access-control-allow-methods'), 'PUT, POST');
  t.equal(ok.headers.get('access-control-allow-headers'), 'content-type, x-amz-meta-owner');
  t.equal(ok.headers.get('access-control-max-age'), '60');
  t.equal(ok.headers.get('access-control-expose-headers'), 'ETag');
  t.match(ok.headers.get('vary'), /Origin/);
  t.equal((await preflight(url, 'https://cdn.example.org', 'POST')).status, 200, 'a wildcard origin');

  for (const [origin, method, headers, why] of [
    ['https://evil.example', 'PUT', undefined, 'an origin no rule names'],
    [APP, 'DELETE', undefined, 'a method no rule of the origin allows'],
    [APP, 'PUT', 'content-type, x-custom', 'a header no rule allows'],
    ['https://example.org', 'PUT', undefined, 'the wildcard needs its characters'],
  ] as const) {
    const no = await preflight(url, origin, method, headers);
    t.equal(no.status, 403, why);
    const body = await no.text();
    t.match(body, /<Code>AccessForbidden<\/Code>/);
    t.match(body, /CORSResponse: This CORS request is not allowed/);
    t.notOk(no.headers.get('access-control-allow-origin'));
  }
  t.equal((await preflight(url, 'https://evil.example', 'GET')).status, 200, 'the second rule: GET from anywhere');

  // Without a credential or an account in the path the bucket cannot be told: the default answers.
  t.equal((await preflight(`${base}/s3/uploads/photo.jpg`, 'https://evil.example', 'PUT')).status, 200);
  t.equal(
    (await preflight(`${base}/s3/${a.account_id}/uploads/photo.jpg`, 'https://evil.example', 'PUT')).status,
    403,
    'the account in the path finds the bucket'
  );

  const put = await fetch(url, { method: 'PUT', body: 'bytes', headers: { origin: APP } });
  t.equal(put.status, 200);
  t.equal(put.headers.get('access-control-allow-origin'), APP);
  t.equal(put.headers.get('access-control-expose-headers'), 'ETag');
  t.ok(put.headers.get('etag'));
  const foreign = await fetch(url, { method: 'PUT', body: 'bytes', headers: { origin: 'https://evil.example' } });
  t.notOk(
    foreign.headers.get('access-control-allow-origin'),
    "no rule, no CORS header (the request itself is the signature's business)"
  );
  const forged = await fetch(url.replace(/X-Amz-Signature=[0-9a-f]+/, `X-Amz-Signature=${'0'.repeat(64)}`), {
    method: 'PUT',
    body: 'x',
    headers: { origin: APP },
  });
  t.equal(forged.status, 403);
  t.equal(forged.headers.get('access-control-allow-origin'), APP, 'the page can read why its upload was refused');
});

t.test('cors_default: configurable, and [] leaves buckets without rules closed to pages', async (t) => {
  const { app } = await listeningApp(t, { plugins: { storage: { cors_default: { allowed_origins: [] } } } });
  const a = await activate(app);
  await createBucket(app, a, 'closed');
  const url = (await presign(app, a, 'closed', 'k', { method: 'PUT' })).json().url as string;
  const no = await preflight(url, APP, 'PUT');
  t.equal(no.status, 403);
  t.match(await no.text(), /CORS is not enabled for this bucket/);
  const put = await fetch(url, { method: 'PUT', body: 'x', headers: { origin: APP } });
  t.equal(put.status, 200);
  t.notOk(put.headers.get('access-control-allow-origin'));

  const { app: narrow } = await listeningApp(t, {
    plugins: { storage: { cors_default: { allowed_origins: [APP], allowed_methods: ['GET'], max_age_seconds: 5 } } },
    server: { cors: { origins: ['https://api-only.example'] } },
  });
  const n = await activate(narrow);
  await createBucket(narrow, n, 'narrow');
  const get = (await presign(narrow, n, 'narrow', 'k', { method: 'GET' })).json().url as string;
  const pre = await preflight(get, APP, 'GET');
  t.equal(pre.status, 200);
  t.equal(pre.headers.get('access-control-max-age'), '5');
  t.equal((await preflight(get, APP, 'PUT')).status, 403);
  const apiOrigin = await preflight(get, 'https://api-only.example', 'GET');
  t.equal(apiOrigin.status, 403, "the API's origins do not open the S3 endpoint");
  t.notOk(apiOrigin.headers.get('access-control-allow-origin'));
});
