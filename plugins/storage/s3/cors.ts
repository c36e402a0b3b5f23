import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StorageService } from '../service.js';
import type { StorageConfig } from '../config.js';
import { S3Error } from './errors.js';
import { xmlBody } from './body.js';
import type { S3Request } from './request.js';
import {
  CORS_METHODS,
  MAX_CORS_XML,
  corsRulesFromXml,
  corsRulesToXml,
  matchCorsRule,
  type CorsRule,
} from './cors-rules.js';

/** Where a request to the S3 endpoint goes, as far as CORS needs to know before it is verified. */
export interface CorsTarget {
  req: FastifyRequest;
  reply: FastifyReply;
  /** The account named in the path, or the one whose access key the request names. */
  accountId: string | undefined;
  bucket: string;
}

// S3's words, typo included: clients and people search for them.
const NOT_ALLOWED =
  'CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, '
  + 'request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted '
  + "by the resource's CORS spec.";

function defaultRules(c: StorageConfig['cors_default']): CorsRule[] {
  if (!c.allowed_origins.length) return [];
  return [
    {
      allowedOrigins: c.allowed_origins,
      allowedMethods: c.allowed_methods,
      allowedHeaders: c.allowed_headers,
      exposeHeaders: c.expose_headers,
      maxAgeSeconds: c.max_age_seconds,
    },
  ];
}

/**
 * The access key a request names (presigned query or Authorization header), unverified. It
 * only picks whose bucket's CORS rules answer: a request that names another account's key
 * gets that bucket's CORS headers and then fails its signature check like any other.
 */
export function claimedAccessKey(url: string, authorization: string | undefined): string | undefined {
  const q = /[?&]X-Amz-Credential=([^&/%]+)(?:\/|%2F)/i.exec(url);
  if (q) return q[1];
  return authorization ? /Credential=([^/,\s]+)\//.exec(authorization)?.[1] : undefined;
}

/**
 * CORS on the S3 endpoint, S3's way: a bucket's own configuration (PutBucketCors) when it has
 * one, else the gateway-wide `cors_default`. Preflights are answered from the rules alone;
 * actual requests get CORS headers when a rule allows their origin and method, errors included.
 */
export class BucketCors {
  private readonly fallback: CorsRule[];

  constructor(private readonly storage: StorageService) {
    this.fallback = defaultRules(storage.config.cors_default);
  }

  async get(bucketId: string): Promise<CorsRule[] | undefined> {
    const row = await this.storage.svc.db
      .selectFrom('storage_bucket_cors')
      .select('rules')
      .where('bucket_id', '=', bucketId)
      .executeTakeFirst();
    return row ? (JSON.parse(row.rules) as CorsRule[]) : undefined;
  }

  async put(bucketId: string, rules: CorsRule[]): Promise<void> {
    const values = { bucket_id: bucketId, rules: JSON.stringify(rules), updated_at: Date.now() };
    await this.storage.svc.db
      .insertInto('storage_bucket_cors')
      .values(values)
      .onConflict((oc) => oc.column('bucket_id').doUpdateSet({ rules: values.rules, updated_at: values.updated_at }))
      .execute();
  }

  async delete(bucketId: string): Promise<void> {
    await this.storage.svc.db.deleteFrom('storage_bucket_cors').where('bucket_id', '=', bucketId).execute();
  }

  /** The rules that answer for a bucket: its own, or the default (for unknown accounts and buckets too). */
  private async rulesFor(t: CorsTarget): Promise<CorsRule[]> {
    if (!t.bucket) return this.fallback;
    let accountId = t.accountId;
    if (!accountId) {
      const key = claimedAccessKey(t.req.raw.url ?? '', t.req.headers.authorization);
      accountId = key ? (await this.storage.credentials.lookup(key))?.accountId : undefined;
    }
    const b = accountId ? await this.storage.findBucket(accountId, t.bucket) : undefined;
    return (b && (await this.get(b.bucket_id))) ?? this.fallback;
  }

  /** CORS headers for an actual request from a page (one with an Origin header; others need none). */
  async decorate(t: CorsTarget): Promise<void> {
    const origin = t.req.headers.origin;
    if (typeof origin !== 'string') return;
    t.reply.header('vary', 'Origin');
    const rule = matchCorsRule(await this.rulesFor(t), { origin, method: t.req.method, headers: [] });
    if (rule) allow(t.reply, origin, rule);
  }

  /** An OPTIONS request: 200 with what the matching rule allows, or 403 as S3 answers. */
  async preflight(t: CorsTarget): Promise<unknown> {
    const { req, reply } = t;
    const origin = req.headers.origin;
    if (typeof origin !== 'string' || !origin) {
      throw new S3Error('BadRequest', 'Insufficient information. Origin request header needed.');
    }
    const method = req.headers['access-control-request-method'];
    if (typeof method !== 'string' || !CORS_METHODS.includes(method)) {
      throw new S3Error('BadRequest', `Invalid Access-Control-Request-Method: ${String(method ?? '')}`);
    }
    const asked = req.headers['access-control-request-headers'];
    const headers =
      typeof asked === 'string'
        ? asked
            .split(',')
            .map((h) => h.trim().toLowerCase())
            .filter(Boolean)
        : [];
    const rules = await this.rulesFor(t);
    if (!rules.length)
      throw new S3Error('AccessForbidden', 'CORSResponse: CORS is not enabled for this bucket.', { Method: method });
    const rule = matchCorsRule(rules, { origin, method, headers });
    if (!rule) throw new S3Error('AccessForbidden', NOT_ALLOWED, { Method: method });
    allow(reply, origin, rule);
    reply.header('vary', 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method');
    if (headers.length) reply.header('access-control-allow-headers', headers.join(', '));
    if (rule.maxAgeSeconds !== undefined) reply.header('access-control-max-age', String(rule.maxAgeSeconds));
    return reply.code(200).send();
  }

  /** PutBucketCors, GetBucketCors and DeleteBucketCors: `?cors` on a bucket the signer owns. */
  async operation(r: S3Request): Promise<unknown> {
    const { req, reply, storage } = r;
    if (r.key) throw new S3Error('NotImplemented', 'The cors sub-resource applies to buckets, not objects.');
    if (!r.auth || !r.accountId) throw new S3Error('AccessDenied', 'Access Denied.');
    const b = await storage.findBucket(r.accountId, r.bucket);
    if (!b) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist.', { BucketName: r.bucket });
    if (req.method === 'GET') {
      const rules = await this.get(b.bucket_id);
      if (!rules) {
        throw new S3Error('NoSuchCORSConfiguration', 'The CORS configuration does not exist', { BucketName: r.bucket });
      }
      return reply.type('application/xml').send(corsRulesToXml(rules));
    }
    if (req.method === 'PUT') {
      const rules = corsRulesFromXml(await xmlBody(req.raw, r.auth));
      if (corsRulesToXml(rules).length > MAX_CORS_XML) {
        throw new S3Error('InvalidRequest', 'A CORS configuration is at most 64 KB.');
      }
      await this.put(b.bucket_id, rules);
      return reply.send();
    }
    if (req.method === 'DELETE') {
      await this.delete(b.bucket_id);
      return reply.code(204).send();
    }
    throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }
}

function allow(reply: FastifyReply, origin: string, rule: CorsRule): void {
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-allow-methods', rule.allowedMethods.join(', '));
  if (rule.exposeHeaders.length) reply.header('access-control-expose-headers', rule.exposeHeaders.join(', '));
}
