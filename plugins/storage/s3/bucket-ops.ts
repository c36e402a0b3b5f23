import { bucketAclOf } from './unimplemented.js';
import { S3Error, S3_NS, XML_HEAD, tags, xmlEscape } from './errors.js';
import type { S3Request } from './request.js';
import { bucketNameProblem, prefixProblem, iso, isApiError, type ListedObject } from '../../../core/kit/area.js';
import { deleteObjects } from './delete-objects.js';

function requireSigned(r: S3Request): string {
  if (!r.auth || !r.accountId) throw new S3Error('AccessDenied', 'Access Denied.');
  return r.accountId;
}

function decodeToken(t: string): string {
  try {
    const [k] = JSON.parse(Buffer.from(t, 'base64url').toString('utf8'));
    if (typeof k === 'string') return k;
  } catch {
    /* fall through */
  }
  throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect.', {
    ArgumentName: 'continuation-token',
  });
}

const encodeToken = (k: string) => Buffer.from(JSON.stringify([k])).toString('base64url');

// At whole seconds, as S3 lists them (`.000Z`) and as GET/HEAD send Last-Modified: clients
// that compare the two (rclone) would otherwise see every object as changed.
const wholeSeconds = (ms: number) => Math.floor(ms / 1000) * 1000;

/** One listed object; with `owner` (ListObjectsV2's fetch-owner) its owner too. */
function contents(o: ListedObject, enc: (s: string) => string, owner: string | undefined): string {
  const who = owner === undefined ? '' : `<Owner>${tags({ ID: owner })}</Owner>`;
  return `<Contents>${tags({ Key: enc(o.key), LastModified: iso(wholeSeconds(o.last_modified)), ETag: o.etag, Size: o.size, StorageClass: 'STANDARD' })}${who}</Contents>`;
}

/** Bucket-level operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation, ListObjects(V2). */
export async function bucketOps(r: S3Request): Promise<unknown> {
  const { req, reply, storage } = r;
  const accountId = requireSigned(r);
  if (!r.bucket) {
    if (req.method !== 'GET')
      throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
    if (r.query.has('max-buckets'))
      throw new S3Error(
        'NotImplemented',
        'The max-buckets parameter is not implemented by this endpoint: ListBuckets answers every bucket at once.',
        { ArgumentName: 'max-buckets' }
      );
    const rows = await storage.listBuckets(accountId, 1000);
    const list = rows
      .map((b) => `<Bucket>${tags({ Name: b.name, CreationDate: iso(b.created_at), BucketRegion: b.region })}</Bucket>`)
      .join('');
    return reply
      .type('application/xml')
      .send(
        `${XML_HEAD}<ListAllMyBucketsResult xmlns="${S3_NS}"><Owner><ID>${xmlEscape(accountId)}</ID></Owner><Buckets>${list}</Buckets></ListAllMyBucketsResult>`
      );
  }
  if (req.method === 'PUT') {
    req.raw.resume(); // CreateBucketConfiguration: the region is the endpoint's own
    const problem = bucketNameProblem(r.bucket);
    if (problem)
      throw new S3Error('InvalidBucketName', `The specified bucket is not valid: it ${problem}.`, {
        BucketName: r.bucket,
      });
    const acl = bucketAclOf(req.headers['x-amz-acl']);
    try {
      await storage.createBucket(accountId, r.bucket, { acl });
    } catch (e) {
      if (isApiError(e) && e.code === 'already_exists')
        throw new S3Error(
          'BucketAlreadyOwnedByYou',
          'Your previous request to create the named bucket succeeded and you already own it.',
          { BucketName: r.bucket }
        );
      throw e;
    }
    return reply.header('location', `/${r.bucket}`).send();
  }
  const b = await storage.findBucket(accountId, r.bucket);
  if (!b) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist.', { BucketName: r.bucket });
  if (r.query.has('delete')) {
    if (req.method !== 'POST')
      throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
    return deleteObjects(r, b);
  }
  if (req.method === 'HEAD') return reply.header('x-amz-bucket-region', b.region).send();
  if (req.method === 'DELETE') {
    if (!(await storage.deleteBucket(b)))
      throw new S3Error('BucketNotEmpty', 'The bucket you tried to delete is not empty.', { BucketName: r.bucket });
    return reply.code(204).send();
  }
  if (req.method !== 'GET')
    throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
  if (r.query.has('location')) {
    return reply
      .type('application/xml')
      .send(`${XML_HEAD}<LocationConstraint xmlns="${S3_NS}">${xmlEscape(storage.config.region)}</LocationConstraint>`);
  }

  const q = r.query;
  const v2 = q.get('list-type') === '2';
  const prefix = q.get('prefix') ?? '';
  const delimiter = q.get('delimiter') || undefined;
  const urlEncoding = q.get('encoding-type') === 'url';
  const enc = (s: string) => (urlEncoding ? encodeURIComponent(s).replace(/%2F/g, '/') : s);
  if (prefixProblem(prefix))
    throw new S3Error('InvalidArgument', `prefix ${prefixProblem(prefix)}.`, { ArgumentName: 'prefix' });
  const maxRaw = q.get('max-keys') ?? '1000';
  if (!/^\d+$/.test(maxRaw))
    throw new S3Error('InvalidArgument', 'Provided max-keys not an integer or within integer range.', {
      ArgumentName: 'max-keys',
    });
  const maxKeys = Math.min(1000, Number(maxRaw));
  const owner = v2 && q.get('fetch-owner') === 'true' ? accountId : undefined;
  const token = v2 ? q.get('continuation-token') : undefined;
  const after = token ? decodeToken(token) : (v2 ? q.get('start-after') : q.get('marker')) || undefined;
  const page =
    maxKeys === 0
      ? { objects: [], prefixes: [], truncated: false, last: undefined }
      : await storage.list(b, { prefix, delimiter, after, limit: maxKeys });
  const body = [
    tags({
      Name: b.name,
      Prefix: enc(prefix),
      Delimiter: delimiter && enc(delimiter),
      MaxKeys: maxKeys,
      EncodingType: urlEncoding ? 'url' : undefined,
    }),
    v2
      ? tags({
          KeyCount: page.objects.length + page.prefixes.length,
          ContinuationToken: token,
          StartAfter: q.get('start-after') && enc(q.get('start-after')!),
        })
      : tags({ Marker: enc(q.get('marker') ?? '') }),
    tags({ IsTruncated: page.truncated }),
    page.truncated && page.last
      ? v2
        ? tags({ NextContinuationToken: encodeToken(page.last) })
        : tags({ NextMarker: enc(page.last) })
      : '',
    page.objects.map((o) => contents(o, enc, owner)).join(''),
    page.prefixes.map((p) => `<CommonPrefixes>${tags({ Prefix: enc(p) })}</CommonPrefixes>`).join(''),
  ].join('');
  return reply.type('application/xml').send(`${XML_HEAD}<ListBucketResult xmlns="${S3_NS}">${body}</ListBucketResult>`);
}
