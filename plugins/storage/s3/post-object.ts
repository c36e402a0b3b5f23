import { Transform, type Readable } from 'node:stream';
import { isResultsBucket } from '../../../core/kit/area.js';
import type { S3Request } from './request.js';
import { S3Error, S3_NS, XML_HEAD, tags } from './errors.js';
import { checkKey } from './object-target.js';
import { checkPostPolicy } from './post-policy.js';
import { requireActiveAccount } from './verify.js';
import { tooLarge, type UploadCap } from './body.js';
import { checkObjectAcl, refuseUnimplemented } from './unimplemented.js';

// PostObject: a browser form upload (multipart/form-data) to `POST {s3_path}/{bucket}`,
// authorised by a signed POST policy instead of a signed request. The file streams to the
// vendor under the smaller of the policy's content-length-range and the tier's cap as it
// stands now, so form uploads are capped and metered like any PUT through the gateway.

const FIELD_MAX = 20 * 1024; // S3 refuses form fields over 20 KB
const MAX_PARTS = 101; // every field S3 knows, and the file

const malformed = () =>
  new S3Error('MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.');

export function isPostObject(r: S3Request): boolean {
  return (
    r.req.method === 'POST'
    && !r.key
    && !!r.bucket
    && !r.query.size
    && /^multipart\/form-data\b/i.test(String(r.req.headers['content-type'] ?? ''))
  );
}

interface Upload {
  fields: Map<string, string>;
  file: Readable;
  filename: string;
  mime: string;
}

// Loaded on the first form upload: most gateways never see one, and the start should not pay for it.
const loadBusboy = () => import('@fastify/busboy');
let busboy: ReturnType<typeof loadBusboy> | undefined;

/** A part sent as a file (a filename, or a binary type) but named as a field: read as the field's value. */
function fieldFromFilePart(
  name: string,
  stream: Readable,
  set: (value: string) => void,
  fail: (e: Error) => void
): Promise<void> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      const before = size;
      size += c.length;
      if (size <= FIELD_MAX) chunks.push(c);
      else if (before <= FIELD_MAX) {
        chunks.length = 0;
        fail(tooLong(name));
      }
    });
    stream.on('end', () => {
      if (size <= FIELD_MAX) set(Buffer.concat(chunks).toString('utf8'));
      resolve();
    });
  });
}

const tooLong = (name: string) =>
  new S3Error('InvalidArgument', `The form field ${name} is longer than 20 KB.`, { ArgumentName: name });

/**
 * The form's fields up to its file part, and that part's stream (paused until read). Limits
 * are counted here, not by busboy: a part busboy skips past a limit is never drained when it is
 * larger than its buffer, and the form then never finishes (a request that never answers).
 */
async function readForm(r: S3Request): Promise<{ upload: Promise<Upload>; finished: Promise<void> }> {
  const { Busboy } = await (busboy ??= loadBusboy());
  let bb: ReturnType<typeof Busboy>;
  try {
    bb = Busboy({ headers: r.req.headers as any, limits: { fieldSize: FIELD_MAX } });
  } catch {
    throw malformed();
  }
  const fields = new Map<string, string>();
  // Fields sent as file parts (as Python's requests sends every field of `files=`) end after their header.
  const pending: Array<Promise<void>> = [];
  let resolveUpload!: (u: Upload) => void;
  let rejectUpload!: (e: Error) => void;
  const upload = new Promise<Upload>((res, rej) => {
    resolveUpload = res;
    rejectUpload = rej;
  });
  let seenFile = false;
  let parts = 0;
  let failFinished!: (e: Error) => void;
  const finished = new Promise<void>((resolve, reject) => {
    failFinished = reject;
    const counted = () => {
      if (++parts <= MAX_PARTS) return true;
      rejectUpload(new S3Error('InvalidArgument', `A form may have at most ${MAX_PARTS} parts.`));
      return false;
    };
    bb.on('field', (name: string, value: string, _nt: boolean, valueTruncated: boolean) => {
      if (seenFile || !counted()) return; // S3 ignores fields after the file
      if (valueTruncated) return rejectUpload(tooLong(name));
      fields.set(name.toLowerCase(), value);
    });
    bb.on('file', (name: string, stream: Readable, filename: string, _enc: string, mime: string) => {
      if (seenFile || !counted()) {
        stream.resume();
        return;
      }
      if (name.toLowerCase() !== 'file') {
        pending.push(fieldFromFilePart(name, stream, (v) => fields.set(name.toLowerCase(), v), rejectUpload));
        return;
      }
      seenFile = true;
      void Promise.all(pending).then(() => resolveUpload({ fields, file: stream, filename, mime }));
    });
    bb.on('finish', () => {
      rejectUpload(
        new S3Error('InvalidArgument', 'POST requires exactly one file upload per request, in a field named file.', {
          ArgumentName: 'file',
        })
      );
      resolve();
    });
    bb.on('error', () => {
      const e = malformed();
      rejectUpload(e);
      reject(e);
    });
  });
  finished.catch(() => undefined);
  // A client gone before the end of the form: busboy never finishes, so say so here.
  r.req.raw.once('close', () => {
    if (r.req.raw.complete) return;
    const e = new S3Error('IncompleteBody', 'The client closed the connection before the form was complete.');
    rejectUpload(e);
    failFinished(e);
  });
  r.req.raw.pipe(bb);
  return { upload, finished };
}

/** The file's bytes under `cap`, at least `min` of them; a failure errors the stream and aborts the put. */
function cappedFile(file: Readable, cap: UploadCap, min: number, onError: (e: Error) => void): Transform {
  let size = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      cb(size > cap.bytes ? tooLarge(cap) : null, chunk);
    },
    flush(cb) {
      cb(
        size < min
          ? new S3Error(
              'EntityTooSmall',
              `Your proposed upload is smaller than the minimum allowed size of ${min} bytes.`
            )
          : null
      );
    },
  });
  guard.on('error', (e) => {
    file.unpipe(guard);
    file.resume(); // let the parser read on to the end of the form
    onError(e);
  });
  file.pipe(guard);
  return guard;
}

export async function postObject(r: S3Request): Promise<unknown> {
  const { reply, storage } = r;
  const form = await readForm(r);
  const { fields, file, filename, mime } = await form.upload;
  refuseUnimplemented(fields.entries(), 'form field');
  if (fields.has('tagging'))
    throw new S3Error(
      'NotImplemented',
      'The tagging form field is not implemented by this endpoint: objects have no tags.',
      {
        Header: 'tagging',
      }
    );
  const policy = await checkPostPolicy(fields, r.bucket, storage.config.region, Date.now(), (id) =>
    storage.credentials.lookup(id)
  );
  await requireActiveAccount(storage.svc.keys, policy.credential.accountId);
  const rawKey = fields.get('key');
  if (!rawKey)
    throw new S3Error('InvalidArgument', "Bucket POST must contain a field named 'key'.", { ArgumentName: 'key' });
  const key = rawKey.replaceAll('${filename}', filename ?? '');
  checkKey(key);
  if (isResultsBucket(r.bucket)) throw new S3Error('AccessDenied', 'Results are read-only.');
  const b = await storage.findBucket(policy.credential.accountId, r.bucket);
  if (!b) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist.', { BucketName: r.bucket });
  checkObjectAcl(fields.get('acl'), b.acl, 'form field');

  const tier = await storage.uploadCap(b, key);
  const cap =
    policy.maxBytes !== undefined && policy.maxBytes < tier.bytes
      ? { bytes: policy.maxBytes, what: `the policy's content-length-range maximum of ${policy.maxBytes} bytes` }
      : tier;
  const ctrl = new AbortController();
  const body = cappedFile(file, cap, policy.minBytes, (e) => ctrl.abort(e));
  // A broken form or a client gone while the file streams: the vendor must not commit it.
  form.finished.catch((e) => ctrl.abort(e));
  const contentType = fields.get('content-type') || mime || 'application/octet-stream';
  let info;
  try {
    info = await storage.put(b, key, body, contentType, { signal: ctrl.signal });
  } catch (e) {
    if (!ctrl.signal.aborted) throw e;
    const reason = ctrl.signal.reason;
    throw reason instanceof S3Error ? reason : new S3Error('IncompleteBody', 'The upload did not complete.');
  }
  // Committed: what follows the file (ignored fields, the closing boundary) cannot undo it.
  await form.finished.catch(() => undefined);

  const location = `${storage.endpoint}/${encodeURIComponent(b.name)}/${key.split('/').map(encodeURIComponent).join('/')}`;
  reply.header('etag', info.etag).header('location', location);
  const redirect = fields.get('success_action_redirect') ?? fields.get('redirect');
  if (redirect && /^https?:\/\//i.test(redirect)) {
    const to = new URL(redirect);
    to.searchParams.set('bucket', b.name);
    to.searchParams.set('key', key);
    to.searchParams.set('etag', info.etag);
    return reply.code(303).header('location', to.toString()).send();
  }
  const status = fields.get('success_action_status');
  if (status === '201') {
    return reply
      .code(201)
      .type('application/xml')
      .send(
        `${XML_HEAD}<PostResponse xmlns="${S3_NS}">${tags({ Location: location, Bucket: b.name, Key: key, ETag: info.etag })}</PostResponse>`
      );
  }
  return reply.code(status === '200' ? 200 : 204).send();
}
