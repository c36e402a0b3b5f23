import { S3Error } from './errors.js';
import { checkObjectAcl } from './unimplemented.js';
import type { S3Request } from './request.js';
import { resolveRange, type ByteRange, isResultsBucket, isActiveContent, mediaType } from '../../../core/kit/area.js';
import { readSmallBody, smallBodyLength, withUploadBody } from './body.js';
import { copyObject } from './copy-object.js';
import { checkKey } from './object-target.js';
import { hasReadCondition, readCondition, writeCondition } from './conditions.js';

/** A single `bytes=` range; anything else (several ranges, garbage) means the whole object, as S3 does. */
export function parseRange(h: string | undefined): ByteRange | undefined {
  if (!h) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(h.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') return { suffix: Number(m[2]) };
  const start = Number(m[1]);
  if (m[2] === '') return { start };
  const end = Number(m[2]);
  return end < start ? undefined : { start, end };
}

function attachment(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

const isAttachment = (disposition: string | undefined) => !!disposition && /^\s*attachment\s*(;|$)/i.test(disposition);

/** Object operations: PutObject, CopyObject, GetObject (Range), HeadObject, DeleteObject. */
export async function objectOps(r: S3Request): Promise<unknown> {
  const { req, reply, storage, auth } = r;
  const anonymousRead = !auth && (req.method === 'GET' || req.method === 'HEAD');
  if (!r.accountId || (!auth && !anonymousRead)) throw new S3Error('AccessDenied', 'Access Denied.');
  checkKey(r.key);
  const results = isResultsBucket(r.bucket);
  if (results && req.method !== 'GET' && req.method !== 'HEAD')
    throw new S3Error('AccessDenied', 'Results are read-only.');
  const b = results
    ? await storage.resultsBucket(r.accountId, r.key, r.bucket)
    : await storage.findBucket(r.accountId, r.bucket);
  if (!b && results) throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: r.key });
  if (!b) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist.', { BucketName: r.bucket });
  // Unsigned reads only from public buckets; say AccessDenied, not whether the key exists.
  if (!auth && b.acl !== 'public') throw new S3Error('AccessDenied', 'Access Denied.');

  if (req.method === 'PUT') {
    checkObjectAcl(req.headers['x-amz-acl'], b.acl);
    if (req.headers['x-amz-copy-source'])
      return copyObject(
        r,
        b,
        writeCondition(req.headers, 'CopyObject', () => storage.conditionalWrites(b))
      );
    const condition = writeCondition(req.headers, 'PutObject', () => storage.conditionalWrites(b));
    const cap = await storage.uploadCap(b, r.key);
    const contentType = req.headers['content-type'] || 'application/octet-stream';
    const small = smallBodyLength(req.raw, auth!);
    const info =
      small !== undefined
        ? await storage.put(b, r.key, await readSmallBody(req.raw, auth!, cap, small), contentType, { condition })
        : await withUploadBody(req.raw, auth!, cap, (body, o) =>
            storage.put(b, r.key, body, contentType, { ...o, condition })
          );
    return reply.header('etag', info.etag).send();
  }
  if (req.method === 'DELETE') {
    const condition = writeCondition(req.headers, 'DeleteObject', () => storage.conditionalWrites(b));
    await storage.deleteObject(b, r.key, condition && 'if_match' in condition ? condition : undefined);
    return reply.code(204).send();
  }
  if (req.method !== 'GET' && req.method !== 'HEAD')
    throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');

  const range = parseRange(req.headers.range);
  // HEAD answers a Range as GET does (206 with Content-Range, or 416), without the bytes.
  const got =
    req.method === 'HEAD'
      ? await storage.head(b, r.key).then((o) => {
          if (!o) return o;
          const span = resolveRange(range, o.size);
          return span ? { ...o, body: undefined, ...span } : { unsatisfiable: true as const, size: o.size };
        })
      : await storage.get(b, r.key, range);
  if (!got) throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: r.key });
  if (hasReadCondition(req.headers)) {
    // Preconditions come before the range: an unsatisfiable range carries no ETag, so look it up.
    const current = 'unsatisfiable' in got ? await storage.head(b, r.key) : got;
    if (!current) throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: r.key });
    let verdict;
    try {
      verdict = readCondition(req.headers, current);
    } catch (e) {
      if ('body' in got) got.body?.destroy();
      throw e;
    }
    if (verdict === 'not-modified') {
      if ('body' in got) got.body?.destroy();
      return reply
        .code(304)
        .header('etag', current.etag)
        .header('last-modified', new Date(current.last_modified).toUTCString())
        .send();
    }
  }
  if ('unsatisfiable' in got)
    throw new S3Error('InvalidRange', 'The requested range is not satisfiable.', {
      'Content-Range': `bytes */${got.size}`,
      ActualObjectSize: String(got.size),
    });
  const partial = range !== undefined;
  // Response overrides are for signed URLs only, as in S3.
  const override = (name: string) => (auth ? r.query.get(name) : undefined);
  const asked = override('response-content-type');
  // A type a URL asks for is sent back only when it is one well-formed media type: what a
  // browser makes of anything else is its own guess.
  const type = asked === undefined ? got.content_type : mediaType(asked) ? asked.trim() : 'application/octet-stream';
  reply
    .header('content-type', type)
    .header('etag', got.etag)
    .header('last-modified', new Date(got.last_modified).toUTCString())
    .header('accept-ranges', 'bytes')
    .header('content-length', String(partial ? got.end - got.start + 1 : got.size));
  const disposition = override('response-content-disposition') ?? b.content_disposition;
  const inlineAllowed = b.acl === 'public' && storage.config.allow_inline_html;
  if (isActiveContent(type) && !inlineAllowed)
    reply.header('content-disposition', isAttachment(disposition) ? disposition! : attachment(r.key));
  else if (disposition) reply.header('content-disposition', disposition);
  const cache = override('response-cache-control');
  if (cache) reply.header('cache-control', cache);
  if (partial) reply.code(206).header('content-range', `bytes ${got.start}-${got.end}/${got.size}`);
  if (req.method === 'HEAD' || !got.body) return reply.send();
  // Metered as served when the response starts; the owner's account pays for public reads.
  storage.usage.served(b.account_id, partial ? got.end - got.start + 1 : got.size);
  return reply.send(got.body);
}
