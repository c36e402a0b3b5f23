import t from 'tap';
import { request } from 'node:http';
import { createHash } from 'node:crypto';
import { activate } from '../helpers.js';
import { listeningApp, STORAGE_VENDOR } from '../../../helpers/listening-app.js';
import { createBucket, s3Credentials } from '../../../helpers/storage-api.js';
import { amzDate, hmacHex, sha256Hex, signingKey, stringToSign } from '../../../../core/capabilities/storage/sigv4.js';

// database-independent: the small-body path's checks; no row of its own.

// Small bodies (up to 64 KiB declared) are read whole rather than streamed: the same checks
// must hold on that path. Header-signed requests, as SDKs send them.

type Cred = { access_key_id: string; secret_access_key: string; endpoint: string; region: string };

function signedPut(
  c: Cred,
  key: string,
  body: Buffer,
  o: { hash?: string; headers?: Record<string, string>; send?: Buffer; destroyAfter?: boolean } = {}
): Promise<{ status: number; body: string }> {
  const url = new URL(`${c.endpoint}/small/${key}`);
  const amz = amzDate(Date.now());
  const scope = `${amz.slice(0, 8)}/${c.region}/s3/aws4_request`;
  const hash = o.hash ?? sha256Hex(body);
  const canonical = [
    'PUT',
    url.pathname,
    '',
    `host:${url.host}\nx-amz-content-sha256:${hash}\nx-amz-date:${amz}\n`,
    'host;x-amz-content-sha256;x-amz-date',
    hash,
  ].join('\n');
  const sig = hmacHex(signingKey(c.secret_access_key, amz.slice(0, 8), c.region), stringToSign(amz, scope, canonical));
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'PUT',
        headers: {
          'content-length': body.length,
          'x-amz-date': amz,
          'x-amz-content-sha256': hash,
          ...o.headers,
          authorization: `AWS4-HMAC-SHA256 Credential=${c.access_key_id}/${scope}, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${sig}`,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      }
    );
    req.on('error', (e) => (o.destroyAfter ? resolve({ status: 0, body: e.message }) : reject(e)));
    if (o.destroyAfter) {
      req.write(o.send!, () =>
        setTimeout(() => {
          req.destroy();
          resolve({ status: 0, body: 'closed' });
        }, 50)
      );
    } else {
      req.end(o.send ?? body);
    }
  });
}

t.test(
  'small bodies: hash, checksum and length checked; a refused one stores nothing',
  { skip: STORAGE_VENDOR === 's3' && 'local storage only' },
  async (t) => {
    const { app } = await listeningApp(t, {
      plugins: { storage: { tier_caps: { free: { max_object_bytes: 4096, max_total_bytes: 100_000 } } } },
    });
    const a = await activate(app);
    await createBucket(app, a, 'small');
    const c = await s3Credentials(app, a);
    const body = Buffer.from('a small object body');
    const crc32 = (b: Buffer) => {
      let x = 0xffffffff;
      for (const v of b) {
        x ^= v;
        for (let k = 0; k < 8; k++) x = x & 1 ? 0xedb88320 ^ (x >>> 1) : x >>> 1;
      }
      const o = Buffer.alloc(4);
      o.writeUInt32BE((x ^ 0xffffffff) >>> 0);
      return o.toString('base64');
    };

    const ok = await signedPut(c, 'ok', body, { headers: { 'x-amz-checksum-crc32': crc32(body) } });
    t.equal(ok.status, 200, ok.body);
    const listed = async () =>
      (await app.inject({ method: 'GET', url: '/v1/storage/buckets/small/objects', headers: a.auth }))
        .json()
        .items.map((o: any) => [o.key, o.size, o.etag]);
    t.same(
      await listed(),
      [['ok', body.length, `"${createHash('md5').update(body).digest('hex')}"`]],
      'stored with its MD5 as the ETag'
    );

    const badHash = await signedPut(c, 'bad-hash', body, { hash: sha256Hex('something else') });
    t.equal(badHash.status, 400);
    t.match(badHash.body, /<Code>XAmzContentSHA256Mismatch<\/Code>/);
    const badCrc = await signedPut(c, 'bad-crc', body, {
      headers: { 'x-amz-checksum-crc32': crc32(Buffer.from('other')) },
    });
    t.equal(badCrc.status, 400);
    t.match(badCrc.body, /<Code>BadDigest<\/Code>/);
    const big = await signedPut(c, 'big', Buffer.alloc(5000));
    t.equal(big.status, 413, 'over the object cap: refused before the body is read');
    t.match(big.body, /<Code>EntityTooLarge<\/Code>/);
    const cut = await signedPut(c, 'cut', Buffer.alloc(2000), { send: Buffer.alloc(1000), destroyAfter: true });
    t.equal(cut.status, 0, 'the client went away midway');
    await new Promise((r) => setTimeout(r, 100));
    t.same(
      await listed(),
      [['ok', body.length, `"${createHash('md5').update(body).digest('hex')}"`]],
      'refused and cut uploads stored nothing'
    );
    const usage = (await app.inject({ method: 'GET', url: '/v1/storage/usage', headers: a.auth })).json();
    t.equal(usage.bytes_stored, body.length, 'and metered nothing');

    // aws-chunked with a checksum trailer, as the AWS SDK sends small objects.
    const chunked = (data: Buffer, crc: string) =>
      Buffer.concat([
        Buffer.from(`${data.length.toString(16)}\r\n`),
        data,
        Buffer.from(`\r\n0\r\nx-amz-checksum-crc32:${crc}\r\n\r\n`),
      ]);
    const sdkHeaders = (n: number) => ({
      'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': String(n),
      'x-amz-trailer': 'x-amz-checksum-crc32',
    });
    const hash = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
    const good = await signedPut(c, 'sdk', chunked(body, crc32(body)), { hash, headers: sdkHeaders(body.length) });
    t.equal(good.status, 200, good.body);
    const bad = await signedPut(c, 'sdk-bad', chunked(body, crc32(Buffer.from('x'))), {
      hash,
      headers: sdkHeaders(body.length),
    });
    t.match(bad.body, /<Code>BadDigest<\/Code>/, 'a wrong trailer checksum is refused');
    const short = await signedPut(c, 'sdk-short', chunked(body, crc32(body)), {
      hash,
      headers: sdkHeaders(body.length + 1),
    });
    t.match(short.body, /<Code>IncompleteBody<\/Code>/, 'a decoded length that is not the declared one is refused');
    const got = await app.inject({ method: 'GET', url: '/v1/storage/buckets/small/objects', headers: a.auth });
    t.same(
      got.json().items.map((o: any) => [o.key, o.size]),
      [
        ['ok', body.length],
        ['sdk', body.length],
      ]
    );
  }
);
