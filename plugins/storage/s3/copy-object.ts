import { S3Error, S3_NS, XML_HEAD, tags } from './errors.js';
import type { S3Request } from './request.js';
import { checkKey } from './object-target.js';
import { isResultsBucket, iso, type WriteCondition } from '../../../core/kit/area.js';
import type { BucketRow } from '../service.js';
import { tooLarge } from './body.js';

/** `x-amz-copy-source`: `[/]bucket/key`, URL-encoded, maybe `?versionId=` (versions are not kept). */
function copySource(header: string): { bucket: string; key: string } {
  const [path, query] = header.split('?');
  if (query && !/^versionId=(null)?$/.test(query))
    throw new S3Error('NotImplemented', 'Object versions are not kept by this endpoint.');
  let decoded: string;
  try {
    decoded = decodeURIComponent(path.replace(/^\//, ''));
  } catch {
    throw new S3Error('InvalidArgument', 'x-amz-copy-source is not validly percent-encoded.', {
      ArgumentName: 'x-amz-copy-source',
    });
  }
  const i = decoded.indexOf('/');
  if (i <= 0 || i === decoded.length - 1)
    throw new S3Error('InvalidArgument', 'x-amz-copy-source must be bucket/key.', {
      ArgumentName: 'x-amz-copy-source',
    });
  return { bucket: decoded.slice(0, i), key: decoded.slice(i + 1) };
}

/**
 * CopyObject within the signer's account: the source streams into the target through the
 * target bucket's vendor (buckets may live on different vendors), under the same caps and
 * metering as a put. The content type is the source's unless the directive is REPLACE.
 */
export async function copyObject(r: S3Request, target: BucketRow, condition?: WriteCondition): Promise<unknown> {
  const { req, reply, storage } = r;
  // As S3 does: a URL presigned for a PUT must not become a copy of another (maybe private)
  // object by adding a header its signer never saw.
  if (!r.auth!.signedHeaders.includes('x-amz-copy-source'))
    throw new S3Error(
      'AccessDenied',
      'There were headers present in the request which were not signed: x-amz-copy-source.'
    );
  const src = copySource(String(req.headers['x-amz-copy-source']));
  checkKey(src.key);
  if (isResultsBucket(src.bucket))
    throw new S3Error('AccessDenied', 'Results cannot be copied; download them instead.');
  const from = await storage.findBucket(target.account_id, src.bucket);
  if (!from) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist.', { BucketName: src.bucket });
  const replace = String(req.headers['x-amz-metadata-directive'] ?? 'COPY').toUpperCase() === 'REPLACE';
  if (from.bucket_id === target.bucket_id && src.key === r.key && !replace) {
    throw new S3Error(
      'InvalidRequest',
      "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata."
    );
  }
  req.raw.resume(); // a copy has no body of its own
  const got = await storage.get(from, src.key);
  if (!got) throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: src.key });
  if ('unsatisfiable' in got) throw new S3Error('InternalError', 'The source object could not be read.');
  const cap = await storage.uploadCap(target, r.key);
  if (got.size > cap.bytes) {
    got.body.destroy();
    throw tooLarge(cap);
  }
  const type = replace ? req.headers['content-type'] || 'application/octet-stream' : got.content_type;
  const info = await storage.put(target, r.key, got.body, type, { length: got.size, condition });
  // Stored bytes grow by the copy (metered by the put); nothing leaves the gateway, so nothing is served.
  return reply
    .type('application/xml')
    .send(
      `${XML_HEAD}<CopyObjectResult xmlns="${S3_NS}">${tags({ LastModified: iso(info.last_modified), ETag: info.etag })}</CopyObjectResult>`
    );
}
