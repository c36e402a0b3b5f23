import { checkObjectAcl } from './unimplemented.js';
import { S3Error, S3_NS, XML_HEAD, tags } from './errors.js';
import type { S3Request } from './request.js';
import { writableBucket } from './object-target.js';
import { withUploadBody, xmlBody } from './body.js';
import { writeCondition } from './conditions.js';
import { CompleteProblem, MAX_PARTS, NO_SUCH_UPLOAD, type Multipart, type UploadRow } from '../multipart.js';
import type { BucketRow } from '../service.js';
import { iso } from '../../../core/kit/area.js';

const head = (name: string, r: S3Request, b: BucketRow, more = '') =>
  `${XML_HEAD}<${name} xmlns="${S3_NS}">${tags({ Bucket: b.name, Key: r.key })}${more}</${name}>`;

function partNumber(r: S3Request): number {
  const raw = r.query.get('partNumber') ?? '';
  const n = /^\d{1,5}$/.test(raw) ? Number(raw) : 0;
  if (n < 1 || n > MAX_PARTS)
    throw new S3Error('InvalidArgument', `Part number must be an integer between 1 and ${MAX_PARTS}, inclusive.`, {
      ArgumentName: 'partNumber',
    });
  return n;
}

const noSuchUpload = (id: string) => new S3Error('NoSuchUpload', NO_SUCH_UPLOAD, { UploadId: id });

async function findUpload(r: S3Request, mp: Multipart, b: BucketRow): Promise<UploadRow> {
  const id = r.query.get('uploadId') ?? '';
  const upload = await mp.find(b, r.key, id);
  if (!upload) throw noSuchUpload(id);
  return upload;
}

/** The parts a CompleteMultipartUpload document lists, in its order. */
function listedParts(doc: Record<string, any>): Array<{ n: number; etag: string }> {
  const parts = doc.CompleteMultipartUpload?.Part;
  if (!Array.isArray(parts))
    throw new S3Error(
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema.'
    );
  return parts.map((p: any) => {
    const n = Number(p?.PartNumber);
    if (!Number.isInteger(n) || typeof p?.ETag !== 'string')
      throw new S3Error('MalformedXML', 'Each Part needs a PartNumber and an ETag.');
    return { n, etag: p.ETag.trim() };
  });
}

/** CompleteMultipartUpload; repeated after it succeeded (a retry after a lost answer), the same answer. */
async function completeUpload(r: S3Request, mp: Multipart, b: BucketRow): Promise<unknown> {
  const id = r.query.get('uploadId') ?? '';
  const upload = await mp.find(b, r.key, id);
  const condition = writeCondition(r.req.headers, 'CompleteMultipartUpload', () => r.storage.conditionalWrites(b));
  const listed = listedParts(await xmlBody(r.req.raw, r.auth!));
  let etag: string;
  if (!upload) {
    const done = await mp.completedAgain(b, r.key, id, listed);
    if (!done) throw noSuchUpload(id);
    etag = done.etag;
  } else {
    try {
      etag = (await mp.complete(b, upload, listed, condition)).etag;
    } catch (e) {
      if (e instanceof CompleteProblem) throw new S3Error(e.code, e.message, e.extra);
      throw e;
    }
  }
  const location = `${r.storage.endpoint}/${encodeURIComponent(b.name)}/${r.key.split('/').map(encodeURIComponent).join('/')}`;
  return r.reply
    .type('application/xml')
    .send(head('CompleteMultipartUploadResult', r, b, tags({ Location: location, ETag: etag })));
}

/**
 * Multipart uploads: CreateMultipartUpload (POST ?uploads), UploadPart (PUT ?partNumber&uploadId),
 * CompleteMultipartUpload (POST ?uploadId), AbortMultipartUpload (DELETE ?uploadId) and
 * ListParts (GET ?uploadId). Parts are capped against the object cap and the account's room.
 */
export async function multipartOps(r: S3Request, mp: Multipart): Promise<unknown> {
  const { req, reply } = r;
  const b = await writableBucket(r);
  if (r.query.has('uploads')) {
    if (req.method !== 'POST')
      throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
    checkObjectAcl(req.headers['x-amz-acl'], b.acl);
    req.raw.resume();
    const id = await mp.create(b, r.key, req.headers['content-type'] || 'application/octet-stream');
    return reply.type('application/xml').send(head('InitiateMultipartUploadResult', r, b, tags({ UploadId: id })));
  }
  if (req.method === 'POST') return completeUpload(r, mp, b);
  const upload = await findUpload(r, mp, b);
  if (req.method === 'PUT') {
    if (req.headers['x-amz-copy-source'])
      throw new S3Error('NotImplemented', 'UploadPartCopy is not implemented by this endpoint.');
    const n = partNumber(r);
    const cap = await mp.partCap(b, upload, n);
    const info = await withUploadBody(req.raw, r.auth!, cap, (body, o) => mp.putPart(b, upload, n, body, o));
    return reply.header('etag', info.etag).send();
  }
  if (req.method === 'DELETE') {
    // Two aborts at once: one drops the upload, the other finds it taken (gone, as S3 sees it).
    if (!(await mp.abort(b, upload))) throw noSuchUpload(upload.upload_id);
    return reply.code(204).send();
  }
  if (req.method !== 'GET')
    throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
  const maxRaw = r.query.get('max-parts') ?? '1000';
  const after = Number(r.query.get('part-number-marker') ?? '0');
  if (!/^\d+$/.test(maxRaw) || !Number.isInteger(after))
    throw new S3Error('InvalidArgument', 'max-parts and part-number-marker must be integers.');
  const max = Math.min(1000, Number(maxRaw));
  const all = (await mp.parts(upload.upload_id)).filter((p) => p.part_number > after);
  const page = all.slice(0, max);
  const truncated = all.length > page.length;
  const body = [
    tags({
      UploadId: upload.upload_id,
      PartNumberMarker: after,
      NextPartNumberMarker: truncated ? page[page.length - 1].part_number : undefined,
      MaxParts: max,
      IsTruncated: truncated,
      StorageClass: 'STANDARD',
    }),
    page
      .map(
        (p) =>
          `<Part>${tags({ PartNumber: p.part_number, LastModified: iso(p.created_at), ETag: p.etag, Size: p.size })}</Part>`
      )
      .join(''),
  ].join('');
  return reply.type('application/xml').send(head('ListPartsResult', r, b, body));
}
