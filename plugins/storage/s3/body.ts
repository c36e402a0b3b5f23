import { createHash, hash, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { XMLParser } from 'fast-xml-parser';
import { AwsChunkedDecoder } from './chunked.js';
import { checksumFor, type Checksum } from './checksums.js';
import { S3Error } from './errors.js';
import type { S3Auth } from './verify.js';
import { UNSIGNED } from '../../../core/kit/area.js';

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The largest upload allowed, and what limits it (named in the 413). */
export interface UploadCap {
  bytes: number;
  what: string;
}

export function tooLarge(cap: UploadCap): S3Error {
  return new S3Error('EntityTooLarge', `Your proposed upload exceeds ${cap.what}.`, {
    MaxSizeAllowed: String(cap.bytes),
  });
}

/** What the end of a body is checked against: its declared length, x-amz-content-sha256, x-amz-checksum-*. */
interface BodyChecks {
  declared?: number;
  /** A running SHA-256 of a streamed body; 'whole' for a body read whole (hashed once at the end). */
  sha?: Hash | 'whole';
  checksum?: Checksum;
  checkName?: string;
  checksumHeader?: string;
  /** Content-MD5, decoded; hashed here because the vendor's ETag MD5 is only known after it has committed the object. */
  md5?: { want: string; hash: Hash | 'whole' };
}

/** The Content-MD5 a body must match, or undefined; one that is not a base64 16-byte MD5 is refused before the body is read. */
function contentMd5(req: IncomingMessage): string | undefined {
  const raw = header(req, 'content-md5');
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (!/^[A-Za-z0-9+/]{22}==$/.test(v) || Buffer.from(v, 'base64').length !== 16)
    throw new S3Error('InvalidDigest', 'The Content-MD5 you specified was invalid.');
  return v;
}

function bodyChecks(req: IncomingMessage, payload: string, declared: number | undefined, whole = false): BodyChecks {
  const sha = /^[0-9a-f]{64}$/.test(payload) ? (whole ? 'whole' : createHash('sha256')) : undefined;
  let checksumHeader: string | undefined;
  for (const h in req.headers)
    if (h.startsWith('x-amz-checksum-') && h !== 'x-amz-checksum-type' && h !== 'x-amz-checksum-algorithm')
      checksumHeader ??= h;
  const trailerName = header(req, 'x-amz-trailer')?.trim().toLowerCase();
  const checkName = checksumHeader ?? (trailerName?.startsWith('x-amz-checksum-') ? trailerName : undefined);
  const md5 = contentMd5(req);
  return {
    declared,
    sha,
    checksumHeader,
    checkName,
    checksum: checkName ? checksumFor(checkName) : undefined,
    md5: md5 === undefined ? undefined : { want: md5, hash: whole ? 'whole' : createHash('md5') },
  };
}

/** The refusal a complete body of `size` bytes earns, or undefined when it passes every check. */
function endProblem(
  req: IncomingMessage,
  payload: string,
  c: BodyChecks,
  size: number,
  trailers?: Record<string, string>,
  whole?: Buffer
): S3Error | undefined {
  if (c.declared !== undefined && size !== c.declared)
    return new S3Error(
      'IncompleteBody',
      `You did not provide the number of bytes specified (${c.declared}); got ${size}.`
    );
  if (c.sha && (c.sha === 'whole' ? hash('sha256', whole!, 'hex') : c.sha.digest('hex')) !== payload)
    return new S3Error(
      'XAmzContentSHA256Mismatch',
      'The provided x-amz-content-sha256 header does not match what was computed.'
    );
  if (c.checksum && c.checkName) {
    const want = c.checksumHeader ? header(req, c.checksumHeader) : trailers?.[c.checkName];
    if (want !== undefined && c.checksum.digestBase64() !== want)
      return new S3Error('BadDigest', `The ${c.checkName} you specified did not match the calculated checksum.`);
  }
  if (c.md5 && (c.md5.hash === 'whole' ? hash('md5', whole!, 'base64') : c.md5.hash.digest('base64')) !== c.md5.want) {
    return new S3Error('BadDigest', 'The Content-MD5 you specified did not match what we received.');
  }
  return undefined;
}

function isChunked(req: IncomingMessage, payload: string): boolean {
  return payload.startsWith('STREAMING-') || /(^|,)\s*aws-chunked\s*(,|$)/.test(header(req, 'content-encoding') ?? '');
}

/** Bodies up to this many declared bytes are read whole into memory rather than streamed. */
export const SMALL_BODY = 64 * 1024;

/** The decoder an aws-chunked body needs, by its x-amz-content-sha256 (signed chunks chain on the request's signature). */
function chunkDecoder(auth: S3Auth): AwsChunkedDecoder {
  const payload = auth.payload;
  if (payload === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' || payload === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER') {
    return new AwsChunkedDecoder({
      key: auth.seed.key,
      amz: auth.seed.amz,
      scope: auth.seed.scope,
      seed: auth.seed.signature,
    });
  }
  if (payload === 'STREAMING-UNSIGNED-PAYLOAD-TRAILER' || payload === UNSIGNED) return new AwsChunkedDecoder();
  throw new S3Error('NotImplemented', `x-amz-content-sha256 ${payload} is not supported.`);
}

/**
 * The declared length of a body of at most SMALL_BODY bytes (content-length, or for
 * aws-chunked x-amz-decoded-content-length), or undefined when the body should stream: a
 * small object then skips the stream machinery between the request and the vendor.
 */
export function smallBodyLength(req: IncomingMessage, auth: S3Auth): number | undefined {
  const raw = header(req, isChunked(req, auth.payload) ? 'x-amz-decoded-content-length' : 'content-length');
  if (raw === undefined || raw.length > 5 || !/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n <= SMALL_BODY ? n : undefined;
}

/**
 * Read a small body (see smallBodyLength) whole, aws-chunked bodies decoded, under `cap`,
 * with the same checks as a streamed one: its declared length, x-amz-content-sha256, and
 * any x-amz-checksum-* header or trailer.
 */
export function readSmallBody(req: IncomingMessage, auth: S3Auth, cap: UploadCap, length: number): Promise<Buffer> {
  if (length > cap.bytes) throw tooLarge(cap);
  const decoder = isChunked(req, auth.payload) ? chunkDecoder(auth) : undefined;
  const checks = bodyChecks(req, auth.payload, length, true);
  const source = decoder ?? req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let finished = false;
    const done = (e?: Error) => {
      if (finished) return;
      finished = true;
      source.off('data', onData).off('end', onEnd);
      req.off('error', done).off('close', onClose);
      if (decoder) {
        decoder.off('error', done);
        if (e) req.unpipe(decoder);
      }
      if (e) return reject(e);
      const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      const problem = endProblem(req, auth.payload, checks, size, decoder?.trailers, data);
      if (problem) return reject(problem);
      resolve(data);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      // More than declared: refuse now rather than hold it (the length check says so).
      if (size > length)
        return done(
          new S3Error('IncompleteBody', `You did not provide the number of bytes specified (${length}); got more.`)
        );
      checks.checksum?.update(chunk);
      chunks.push(chunk);
    };
    const onEnd = () => done();
    const onClose = () => {
      if (!req.complete)
        done(new S3Error('IncompleteBody', 'The client closed the connection before the body was complete.'));
    };
    source.on('data', onData).on('end', onEnd);
    req.on('error', done).on('close', onClose);
    if (decoder) req.pipe(decoder.on('error', done));
  });
}

/**
 * The bytes of a PutObject as a stream the vendor can consume: aws-chunked bodies decoded,
 * the size capped as it flows (and refused at once when the declared size is over the cap),
 * and the declared length, x-amz-content-sha256 and any x-amz-checksum-* header or trailer
 * checked at the end. A failure errors the stream, so the vendor never commits the object,
 * and is reported to `onError` first so the caller can answer with it.
 */
export function uploadBody(
  req: IncomingMessage,
  auth: S3Auth,
  cap: UploadCap,
  onError: (e: Error) => void
): { stream: Readable; length?: number } {
  const payload = auth.payload;
  const chunked = isChunked(req, payload);
  const decoder = chunked ? chunkDecoder(auth) : undefined;
  const declaredRaw = chunked ? header(req, 'x-amz-decoded-content-length') : header(req, 'content-length');
  const declared = declaredRaw !== undefined && /^\d+$/.test(declaredRaw) ? Number(declaredRaw) : undefined;
  if (declared !== undefined && declared > cap.bytes) throw tooLarge(cap);

  const checks = bodyChecks(req, payload, declared);
  let size = 0;
  // The last chunk is held back until the end checks pass: a vendor that knows the length
  // (s3, minio) would otherwise have sent every byte upstream before a bad checksum is
  // found, and the remote store would commit an object this request refuses.
  let held: Buffer | undefined;

  const guard = new Transform({
    // Room for a few network reads while the vendor writes a batch to disk.
    highWaterMark: 256 * 1024,
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > cap.bytes) return cb(tooLarge(cap));
      if (checks.sha !== 'whole') checks.sha?.update(chunk);
      checks.checksum?.update(chunk);
      const md5 = checks.md5?.hash;
      if (md5 && md5 !== 'whole') md5.update(chunk);
      const previous = held;
      held = chunk;
      cb(null, previous);
    },
    flush(cb) {
      const problem = endProblem(req, payload, checks, size, decoder?.trailers);
      if (problem) return cb(problem);
      cb(null, held);
    },
  });
  // Not stream.pipeline: it would destroy the request, and with it the socket the error
  // response has to go out on. Failures are reported first, then passed to the consumer.
  let failed = false;
  const fail = (e: Error) => {
    if (failed) return;
    failed = true;
    req.unpipe();
    decoder?.unpipe();
    onError(e);
    guard.destroy(e);
  };
  req.on('error', fail);
  req.on('close', () => {
    if (!req.complete)
      fail(new S3Error('IncompleteBody', 'The client closed the connection before the body was complete.'));
  });
  decoder?.on('error', fail);
  guard.on('error', fail);
  if (decoder) req.pipe(decoder).pipe(guard);
  else req.pipe(guard);
  return { stream: guard, length: declared };
}

/**
 * Hand the body of a signed upload to `fn` under `cap`. When the body is refused midway
 * (too large, bad checksum, client gone), `fn`'s consumer is aborted and the refusal is
 * what the request answers.
 */
export async function withUploadBody<T>(
  req: IncomingMessage,
  auth: S3Auth,
  cap: UploadCap,
  fn: (body: Readable, o: { signal: AbortSignal; length?: number }) => Promise<T>
): Promise<T> {
  const ctrl = new AbortController();
  const body = uploadBody(req, auth, cap, (e) => ctrl.abort(e));
  try {
    return await fn(body.stream, { signal: ctrl.signal, length: body.length });
  } catch (e) {
    if (!ctrl.signal.aborted) throw e;
    const reason = ctrl.signal.reason;
    throw reason instanceof S3Error ? reason : new S3Error('IncompleteBody', 'The upload did not complete.');
  }
}

const XML_MAX = 1024 * 1024;
// Loaded on the first request document (multipart completes, batch deletes): most gateways
// never see one, and the parser is a dozen modules of idle memory.
let xml: Promise<XMLParser> | undefined;
const xmlParser = () =>
  (xml ??= import('fast-xml-parser').then(
    ({ XMLParser }) =>
      new XMLParser({
        ignoreAttributes: true,
        parseTagValue: false,
        trimValues: false,
        htmlEntities: true,
        isArray: (n) => n === 'Part' || n === 'Object',
      })
  ));

/** A small XML request body (CompleteMultipartUpload, DeleteObjects), checked like any upload, parsed. */
export async function xmlBody(req: IncomingMessage, auth: S3Auth): Promise<Record<string, any>> {
  const text = await withUploadBody(
    req,
    auth,
    { bytes: XML_MAX, what: 'the 1 MiB limit of a request document' },
    async (body) => (await buffer(body)).toString('utf8')
  );
  const parser = await xmlParser();
  try {
    return parser.parse(text, true) as Record<string, any>;
  } catch {
    throw new S3Error(
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema.'
    );
  }
}
