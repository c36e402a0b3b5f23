import t from 'tap';
import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutBucketCorsCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { activate } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { createBucket, presign, s3Client } from '../../../helpers/storage-api.js';

// database-independent: a browser against CORS rules; their storage is cors.test.ts's, which runs on both.

// A web app on another origin uploads straight to presigned URLs, as browsers do: a page served
// by a loopback server on one port, the gateway listening on another. Debian's chromium is
// required (README, .ci/run): without it this test fails, it does not skip.

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
];

/** The bytes the page uploads, made the same way here and in the page. */
function pattern(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed * 7 + (i >> 10)) & 255;
  return b;
}

async function pageServer(t: Tap.Test): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><meta charset="utf-8"><title>uploader</title><p>a web app on its own origin</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

interface Upload {
  url: string;
  size: number;
  seed: number;
  type?: string;
}
type Outcome = { status: number; etag: string | null; requestId: string | null } | { error: string };

/** In the page: PUT each body to its URL with fetch, and report what the page may read. */
function putFromPage(uploads: Upload[]): Promise<Outcome[]> {
  return Promise.all(
    uploads.map(async (u) => {
      const body = new Uint8Array(u.size);
      for (let i = 0; i < u.size; i++) body[i] = (i * 31 + u.seed * 7 + (i >> 10)) & 255;
      try {
        const res = await fetch(u.url, { method: 'PUT', body, headers: u.type ? { 'content-type': u.type } : {} });
        return { status: res.status, etag: res.headers.get('etag'), requestId: res.headers.get('x-amz-request-id') };
      } catch (e) {
        return { error: String(e) };
      }
    })
  );
}

t.test(
  'a page on another origin uploads to presigned URLs (single PUT and multipart) in headless Chromium',
  async (t) => {
    const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 60_000 });
    t.teardown(() => browser.close());
    const { app, base } = await listeningApp(t);
    const origin = await pageServer(t);
    t.not(new URL(origin).port, new URL(base).port, 'the page and the gateway are different origins');
    const a = await activate(app);
    const s3 = await s3Client(t, app, a);
    await createBucket(app, a, 'browser-uploads');

    const page = await browser.newPage();
    await page.goto(`${origin}/`);

    // One PUT to a URL from the API, with a content type (a preflighted request).
    const url = (await presign(app, a, 'browser-uploads', 'photos/cat.bin', { method: 'PUT' })).json().url as string;
    const [single] = await page.evaluate(putFromPage, [
      { url, size: 200_000, seed: 1, type: 'application/octet-stream' },
    ]);
    t.match(single, { status: 200 }, JSON.stringify(single));
    t.match((single as { etag: string }).etag, /^"[0-9a-f]{32}"$/, 'the page reads the ETag');
    const got = await s3.send(new GetObjectCommand({ Bucket: 'browser-uploads', Key: 'photos/cat.bin' }));
    t.ok(
      Buffer.from(await got.Body!.transformToByteArray()).equals(pattern(200_000, 1)),
      "the object holds the page's bytes"
    );
    t.equal(got.ContentType, 'application/octet-stream');

    // A multipart upload: the server starts it and presigns the parts, the page uploads them and
    // hands back their ETags, the server completes it.
    const mp = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'browser-uploads', Key: 'videos/big.bin' }));
    const sizes = [5 * 1024 * 1024, 300_000];
    const parts = await Promise.all(
      sizes.map(async (size, i) => ({
        size,
        seed: 10 + i,
        url: await getSignedUrl(
          s3,
          new UploadPartCommand({
            Bucket: 'browser-uploads',
            Key: 'videos/big.bin',
            UploadId: mp.UploadId,
            PartNumber: i + 1,
          }),
          { expiresIn: 300 }
        ),
      }))
    );
    const outcomes = await page.evaluate(putFromPage, parts);
    t.same(
      outcomes.map((o) => ('status' in o ? o.status : o.error)),
      [200, 200]
    );
    const etags = outcomes.map((o) => ('etag' in o ? o.etag : null));
    t.ok(
      etags.every((e) => e && /^"[0-9a-f]{32}"$/.test(e)),
      "the page reads each part's ETag"
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'browser-uploads',
        Key: 'videos/big.bin',
        UploadId: mp.UploadId,
        MultipartUpload: { Parts: etags.map((e, i) => ({ ETag: e!, PartNumber: i + 1 })) },
      })
    );
    const big = await s3.send(new GetObjectCommand({ Bucket: 'browser-uploads', Key: 'videos/big.bin' }));
    const want = Buffer.concat(sizes.map((s, i) => pattern(s, 10 + i)));
    t.ok(
      Buffer.from(await big.Body!.transformToByteArray()).equals(want),
      'the assembled object holds the parts in order'
    );

    // The bucket's own rules replace the default: another origin only, so this page is refused.
    await s3.send(
      new PutBucketCorsCommand({
        Bucket: 'browser-uploads',
        CORSConfiguration: {
          CORSRules: [
            { AllowedOrigins: ['https://elsewhere.example'], AllowedMethods: ['PUT'], AllowedHeaders: ['*'] },
          ],
        },
      })
    );
    const again = (await presign(app, a, 'browser-uploads', 'photos/refused.bin', { method: 'PUT' })).json()
      .url as string;
    const [refused] = await page.evaluate(putFromPage, [
      { url: again, size: 10, seed: 2, type: 'application/octet-stream' },
    ]);
    t.match(refused, { error: /TypeError/ }, 'the browser blocks the upload the bucket does not allow');
    const api = await app.inject({
      method: 'GET',
      url: '/v1/storage/buckets/browser-uploads/objects',
      headers: a.auth,
    });
    t.equal(api.statusCode, 200);
    t.same(
      api
        .json()
        .items.map((o: { key: string }) => o.key)
        .sort(),
      ['photos/cat.bin', 'videos/big.bin'],
      'nothing more was stored: the preflight failed'
    );
  }
);
