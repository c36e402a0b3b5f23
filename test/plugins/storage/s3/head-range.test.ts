import t from 'tap';
import { PutObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { activate, errorOf } from '../helpers.js';
import { listeningApp } from '../../../helpers/listening-app.js';
import { createBucket, s3Client, storageUsage } from '../../../helpers/storage-api.js';

// database-independent: ranges on HEAD, in the vendor; no row of its own.

// HeadObject with a Range answers as GetObject would (206 with Content-Range and the range's
// length, or 416), without the bytes, as S3 does.

t.test(
  "HEAD with a Range: 206 with the range's Content-Range and Content-Length, 416 when unsatisfiable",
  async (t) => {
    const { app } = await listeningApp(t);
    const a = await activate(app);
    await createBucket(app, a, 'heads');
    const s3 = await s3Client(t, app, a);
    await s3.send(new PutObjectCommand({ Bucket: 'heads', Key: 'k', Body: '0123456789abcdefghij' }));
    let bodyBytes = 0;
    app.server.on('request', (_req, res) => {
      const write = res.write.bind(res);
      res.write = ((c: any, ...rest: any[]) => {
        bodyBytes += c?.length ?? 0;
        return write(c, ...rest);
      }) as any;
    });
    const head = (Range?: string) => s3.send(new HeadObjectCommand({ Bucket: 'heads', Key: 'k', Range }));

    const part = await head('bytes=5-9');
    t.equal(part.$metadata.httpStatusCode, 206);
    t.equal(part.ContentRange, 'bytes 5-9/20');
    t.equal(part.ContentLength, 5);
    const suffix = await head('bytes=-4');
    t.equal(suffix.ContentRange, 'bytes 16-19/20');
    t.equal(suffix.ContentLength, 4);
    const open = await head('bytes=15-');
    t.equal(open.ContentRange, 'bytes 15-19/20');
    const whole = await head();
    t.equal(whole.$metadata.httpStatusCode, 200);
    t.equal(whole.ContentLength, 20);
    t.equal(whole.ContentRange, undefined);

    const bad = await errorOf(head('bytes=100-200'));
    t.equal(bad.$metadata.httpStatusCode, 416, `unsatisfiable: 416 (the SDK names it ${bad.name})`);
    t.equal(bodyBytes, 0, 'no HEAD sent a body');
    t.equal((await storageUsage(app, a)).bytes_served, 0, 'nothing served');
  }
);
