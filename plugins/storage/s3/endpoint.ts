import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isApiError, sendContinue } from '../../../core/kit/area.js';
import { WriteConditionFailed, type StorageService } from '../service.js';
import { conditionFailed } from './conditions.js';
import { S3Error, errorXml } from './errors.js';
import { requireActiveAccount, verifySigV4 } from './verify.js';
import type { S3Request } from './request.js';
import { parseQuery } from './sigv4-request.js';
import { bucketOps } from './bucket-ops.js';
import { objectOps } from './object-ops.js';
import { multipartOps } from './multipart-ops.js';
import { isPostObject, postObject } from './post-object.js';
import { BucketCors } from './cors.js';
import { giveContentTypeBack, putContentTypeAside } from './raw-content-type.js';
import { checkExpectedOwner, refuseUnimplemented } from './unimplemented.js';
import { refuseSigV2 } from './sigv2.js';

// Sub-resources of the S3 API this endpoint does not serve: answered NotImplemented rather
// than mistaken for a plain GET or PUT of the bucket or object.
const UNSUPPORTED = [
  'acl',
  'policy',
  'tagging',
  'versioning',
  'lifecycle',
  'website',
  'replication',
  'encryption',
  'logging',
  'notification',
  'object-lock',
  'retention',
  'legal-hold',
  'restore',
  'select',
  'torrent',
  'versions',
  'requestPayment',
  'accelerate',
  'analytics',
  'inventory',
  'metrics',
  'ownershipControls',
  'publicAccessBlock',
  'intelligent-tiering',
  'attributes',
  'policyStatus',
];
// Methods S3 has no operation for: routed here so that they are answered in S3's XML.
// OPTIONS is a CORS preflight.
const OTHER_METHODS = ['PATCH', 'OPTIONS'];

function sendError(reply: FastifyReply, req: FastifyRequest, e: S3Error): FastifyReply {
  for (const [k, v] of Object.entries(e.extra)) if (k === 'Content-Range') reply.header('content-range', v);
  // A refused upload whose body was not read: close rather than read the rest of it.
  if (!req.raw.complete && (req.method === 'PUT' || req.method === 'POST')) reply.header('connection', 'close');
  reply.code(e.status).header('x-amz-request-id', req.id).header('x-content-type-options', 'nosniff');
  if (req.method === 'HEAD') return reply.send();
  return reply.type('application/xml').send(errorXml(e, req.raw.url?.split('?')[0] ?? '', req.id));
}

function toS3Error(err: unknown, req: FastifyRequest): S3Error {
  if (err instanceof S3Error) return err;
  if (err instanceof WriteConditionFailed) return conditionFailed(err.reason, err.key);
  if (isApiError(err)) {
    if (err.code === 'no_vendor_available' || err.code === 'vendor_error' || err.code === 'vendor_timeout')
      return new S3Error('ServiceUnavailable', err.message);
    if (err.status === 404) return new S3Error('NoSuchBucket', err.message);
    if (err.status < 500) return new S3Error('InvalidArgument', err.message);
  }
  req.log.error({ err }, 's3 endpoint error');
  return new S3Error('InternalError', 'We encountered an internal error. Please try again.');
}

/**
 * The gateway's S3-compatible endpoint, path style, under `s3_path`. Registered in its own
 * plugin scope so that its bodies stay raw streams (no parser reads them) and its errors are
 * S3 XML. Every request is authenticated by SigV4 (presigned query or Authorization header, or
 * for a form upload a signed POST policy), except GETs of objects in public buckets addressed as `/s3/{account_id}/{bucket}/{key}`.
 */
export async function registerS3Endpoint(app: FastifyInstance, storage: StorageService): Promise<void> {
  const prefix = storage.config.s3_path;
  app.removeAllContentTypeParsers();
  const leaveRaw = (_req: FastifyRequest, _payload: unknown, done: (err: null, body: undefined) => void) =>
    done(null, undefined);
  // The same no-op under a pattern that matches every type: Fastify caches what a pattern
  // matched by content type, but looks the catch-all up anew (parsing the header) each request.
  app.addContentTypeParser(/^/, leaveRaw);
  app.addContentTypeParser('*', leaveRaw);
  app.setErrorHandler((err, req, reply) => sendError(reply, req, toS3Error(err, req)));
  const cors = new BucketCors(storage);
  app.addHook('onRequest', putContentTypeAside);

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    giveContentTypeBack(req);
    reply.header('x-content-type-options', 'nosniff').header('x-amz-request-id', req.id);
    if (req.method === 'PATCH')
      throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
    const url = req.raw.url ?? '/';
    const qi = url.indexOf('?');
    const path = (qi < 0 ? url : url.slice(0, qi)).slice(prefix.length).replace(/^\//, '');
    let query: Map<string, string>;
    let segs: string[];
    try {
      query = new Map(parseQuery(qi < 0 ? '' : url.slice(qi + 1)));
      segs = path === '' ? [] : path.split('/').map(decodeURIComponent);
    } catch {
      throw new S3Error('InvalidArgument', 'The request path or query is not validly percent-encoded.');
    }
    refuseSigV2(req.headers, query);
    // Account ids contain "_", which bucket names cannot: the two forms never collide.
    const explicit = segs[0]?.startsWith('acct_') ? segs.shift() : undefined;
    // Before the signature check, so that a page can read the error of a refused request too.
    const target = { req, reply, accountId: explicit, bucket: segs[0] ?? '' };
    if (req.method === 'OPTIONS') return cors.preflight(target);
    if (req.headers.origin !== undefined) await cors.decorate(target);
    const auth = await verifySigV4(
      { method: req.method, url, headers: req.headers },
      {
        now: Date.now(),
        skewMs: storage.config.clock_skew_seconds * 1000,
        lookup: (id) => storage.credentials.lookup(id),
      }
    );
    if (auth && explicit && auth.accountId !== explicit) throw new S3Error('AccessDenied', 'Access Denied.');
    const accountId = explicit ?? auth?.accountId;
    // Signed or public, a suspended account's requests stop here (POST forms: in postObject).
    if (accountId) await requireActiveAccount(storage.svc.keys, accountId);
    const r: S3Request = {
      req,
      reply,
      storage,
      auth,
      accountId,
      bucket: segs[0] ?? '',
      key: segs.slice(1).join('/'),
      query,
    };
    if (query.has('cors')) return cors.operation(r);
    // Presigned URLs carry headers in the query.
    refuseUnimplemented([...Object.entries(req.headers), ...query.entries()]);
    checkExpectedOwner(req.headers, accountId);
    // A part of a completed upload (GetObject, HeadObject); with an uploadId it is UploadPart's.
    if (query.has('partNumber') && !query.has('uploadId'))
      throw new S3Error(
        'NotImplemented',
        'The partNumber parameter is not implemented by this endpoint: objects are read whole or by Range.',
        { ArgumentName: 'partNumber' }
      );
    if (query.size)
      for (const name of UNSUPPORTED)
        if (query.has(name))
          throw new S3Error('NotImplemented', `The ${name} sub-resource is not implemented by this endpoint.`);
    // Authenticated (a form by the policy in its body): a client waiting to send its body may.
    sendContinue(req.raw, reply.raw);
    // SDKs address buckets as `/bucket/` as well as `/bucket`: an empty key is the bucket.
    if (isPostObject(r)) return postObject(r);
    if (r.key && (query.has('uploads') || query.has('uploadId'))) return multipartOps(r, storage.multipart);
    if (r.key) return objectOps(r);
    if (query.has('uploads'))
      throw new S3Error('NotImplemented', 'ListMultipartUploads is not implemented by this endpoint.');
    return bucketOps(r);
  };

  // cors: false: the API's CORS (core/http/cors.ts) stays out of this scope, which has its own.
  const route = {
    config: { auth: 'none' as const, cors: false, continueInHandler: true },
    schema: { hide: true } as any,
    exposeHeadRoute: false,
    handler,
  };
  const methods = ['GET', 'HEAD', 'PUT', 'DELETE', 'POST', ...OTHER_METHODS] as const;
  app.route({ method: [...methods], url: prefix, ...route });
  app.route({ method: [...methods], url: `${prefix}/*`, ...route });
}
