import { createHmac, hash } from 'node:crypto';

// AWS Signature Version 4 for S3: the primitives that compute a signature. Both sides need
// them: a storage vendor presigns URLs with them, and the storage area's S3 endpoint checks
// every request with them (the checking itself, from a raw request, is the area's).

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const UNSIGNED = 'UNSIGNED-PAYLOAD';
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** RFC 3986 encoding: encodeURIComponent leaves !'()* alone, SigV4 does not. */
export function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** An object path for a URL: each segment encoded once, "/" kept. */
export function encodePath(path: string): string {
  return path.split('/').map(rfc3986).join('/');
}

export function canonicalQuery(pairs: Array<[string, string]>): string {
  if (!pairs.length) return ''; // most header-signed requests
  return pairs
    .map(([k, v]) => [rfc3986(k), rfc3986(v)])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

export function sha256Hex(data: string | Buffer): string {
  return hash('sha256', data, 'hex'); // one-shot: no Hash object
}

/** `YYYYMMDDTHHMMSSZ` */
export function amzDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

const keyCache = new Map<string, Buffer>();

/** The HMAC chain "AWS4"+secret → date → region → s3 → aws4_request (cached: it is per day). */
export function signingKey(secret: string, date: string, region: string, service = 's3'): Buffer {
  // Keyed by the secret itself (in memory only): hashing it would cost more than the lookup saves.
  const id = `${date}/${region}/${service}/${secret}`;
  let k = keyCache.get(id);
  if (!k) {
    const kDate = createHmac('sha256', `AWS4${secret}`).update(date).digest();
    const kRegion = createHmac('sha256', kDate).update(region).digest();
    const kService = createHmac('sha256', kRegion).update(service).digest();
    k = createHmac('sha256', kService).update('aws4_request').digest();
    if (keyCache.size > 1000) keyCache.clear();
    keyCache.set(id, k);
  }
  return k;
}

export function stringToSign(amz: string, scope: string, canonicalRequest: string): string {
  return `${ALGORITHM}\n${amz}\n${scope}\n${sha256Hex(canonicalRequest)}`;
}

export function hmacHex(key: Buffer, data: string): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

export interface PresignParams {
  method: string;
  /** Endpoint base, with any path prefix: `http://127.0.0.1:8787/s3`. */
  endpoint: string;
  bucket: string;
  key: string;
  region: string;
  accessKeyId: string;
  secret: string;
  expiresSeconds: number;
  now?: number;
  /** More signed query parameters (response-content-disposition…). */
  query?: Array<[string, string]>;
}

/** S3's response-header overrides of a presigned GET, as query parameters (signed with the rest). */
export function responseQuery(response?: {
  content_type?: string;
  content_disposition?: string;
}): Array<[string, string]> {
  const q: Array<[string, string]> = [];
  if (response?.content_type) q.push(['response-content-type', response.content_type]);
  if (response?.content_disposition) q.push(['response-content-disposition', response.content_disposition]);
  return q;
}

/** A path-style presigned URL signing only `host`, with an unsigned payload. */
export function presignUrl(p: PresignParams): string {
  const base = new URL(p.endpoint);
  const path = `${base.pathname.replace(/\/+$/, '')}/${p.bucket}/${encodePath(p.key)}`;
  const amz = amzDate(p.now ?? Date.now());
  const date = amz.slice(0, 8);
  const scope = `${date}/${p.region}/s3/aws4_request`;
  const query: Array<[string, string]> = [
    ['X-Amz-Algorithm', ALGORITHM],
    ['X-Amz-Credential', `${p.accessKeyId}/${scope}`],
    ['X-Amz-Date', amz],
    ['X-Amz-Expires', String(p.expiresSeconds)],
    ['X-Amz-SignedHeaders', 'host'],
    ...(p.query ?? []),
  ];
  const cq = canonicalQuery(query);
  const canonical = [p.method, path, cq, `host:${base.host}\n`, 'host', UNSIGNED].join('\n');
  const sig = hmacHex(signingKey(p.secret, date, p.region), stringToSign(amz, scope, canonical));
  return `${base.protocol}//${base.host}${path}?${cq}&X-Amz-Signature=${sig}`;
}
