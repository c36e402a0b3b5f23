import type { IncomingHttpHeaders } from 'node:http';
import type { Credential } from '../credentials.js';
import { S3Error } from './errors.js';
import {
  parseAmzDate,
  ALGORITHM,
  UNSIGNED,
  canonicalQuery,
  hmacHex,
  signingKey,
  stringToSign,
} from '../../../core/kit/area.js';
import { canonicalHeaderValue, canonicalUri, parseQuery, sameSignature } from './sigv4-request.js';

/** Who signed a request, and what its body must be checked against. */
export interface S3Auth {
  accountId: string;
  accessKeyId: string;
  presigned: boolean;
  /** x-amz-content-sha256: a hex hash, UNSIGNED-PAYLOAD or a STREAMING-… mode. */
  payload: string;
  /** Lower-case names of the headers the signature covers. */
  signedHeaders: string[];
  /** For signed streaming bodies, whose chunks chain on the request's signature. */
  seed: { signature: string; amz: string; scope: string; key: Buffer };
}

export interface VerifyInput {
  method: string;
  /** The request target as received: raw path and query. */
  url: string;
  headers: IncomingHttpHeaders;
}

export interface VerifyOptions {
  now: number;
  skewMs: number;
  lookup(accessKeyId: string): Promise<Credential | null>;
}

interface Parsed {
  accessKeyId: string;
  date: string;
  region: string;
  amz: string;
  signedHeaders: string[];
  signature: string;
  payload: string;
  /** Query pairs that are signed (all but the signature). */
  query: Array<[string, string]>;
}

const HEX64 = /^[0-9a-f]{64}$/;

function parseCredential(value: string, queryAuth: boolean): { accessKeyId: string; date: string; region: string } {
  const code = queryAuth ? 'AuthorizationQueryParametersError' : 'AuthorizationHeaderMalformed';
  const parts = value.split('/');
  if (parts.length !== 5 || !parts[0] || !/^\d{8}$/.test(parts[1]) || !parts[2])
    throw new S3Error(code, 'The credential must be AKID/YYYYMMDD/region/s3/aws4_request.');
  if (parts[3] !== 's3' || parts[4] !== 'aws4_request')
    throw new S3Error(code, 'The credential scope must end in /s3/aws4_request.');
  return { accessKeyId: parts[0], date: parts[1], region: parts[2] };
}

function parseQueryAuth(pairs: Array<[string, string]>, now: number): Parsed {
  const get = (n: string) => pairs.find(([k]) => k === n)?.[1];
  const E = 'AuthorizationQueryParametersError';
  const algorithm = get('X-Amz-Algorithm');
  if (algorithm !== ALGORITHM) throw new S3Error(E, `X-Amz-Algorithm must be ${ALGORITHM}.`);
  const cred = parseCredential(get('X-Amz-Credential') ?? '', true);
  const amz = get('X-Amz-Date') ?? '';
  const signedAt = parseAmzDate(amz);
  if (!Number.isFinite(signedAt)) throw new S3Error(E, 'X-Amz-Date must be YYYYMMDDTHHMMSSZ.');
  if (amz.slice(0, 8) !== cred.date) throw new S3Error(E, 'The credential date must be the date of X-Amz-Date.');
  const expires = get('X-Amz-Expires') ?? '';
  if (!/^\d{1,6}$/.test(expires) || +expires < 1 || +expires > 604800)
    throw new S3Error(E, 'X-Amz-Expires must be a number of seconds from 1 to 604800.');
  const signedHeaders = (get('X-Amz-SignedHeaders') ?? '').split(';').filter(Boolean);
  const signature = get('X-Amz-Signature') ?? '';
  if (!HEX64.test(signature)) throw new S3Error(E, 'X-Amz-Signature must be 64 hex characters.');
  if (now > signedAt + Number(expires) * 1000)
    throw new S3Error('AccessDenied', 'Request has expired.', { 'X-Amz-Expires': expires });
  return {
    ...cred,
    amz,
    signedHeaders,
    signature,
    payload: get('X-Amz-Content-Sha256') ?? UNSIGNED,
    query: pairs.filter(([k]) => k !== 'X-Amz-Signature'),
  };
}

function parseHeaderAuth(header: string, headers: IncomingHttpHeaders, pairs: Array<[string, string]>): Parsed {
  const E = 'AuthorizationHeaderMalformed';
  if (!header.startsWith(`${ALGORITHM} `)) throw new S3Error(E, `The Authorization header must use ${ALGORITHM}.`);
  const fields: Record<string, string> = {};
  for (const part of header.slice(ALGORITHM.length + 1).split(',')) {
    const i = part.indexOf('=');
    if (i > 0) fields[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  if (!fields.Credential || !fields.SignedHeaders || !fields.Signature)
    throw new S3Error(E, 'The Authorization header needs Credential, SignedHeaders and Signature.');
  const cred = parseCredential(fields.Credential, false);
  const amz = canonicalHeaderValue(headers['x-amz-date']);
  if (!Number.isFinite(parseAmzDate(amz)))
    throw new S3Error('AccessDenied', 'x-amz-date must be present as YYYYMMDDTHHMMSSZ.');
  if (amz.slice(0, 8) !== cred.date) throw new S3Error(E, 'The credential date must be the date of x-amz-date.');
  if (!HEX64.test(fields.Signature)) throw new S3Error(E, 'Signature must be 64 hex characters.');
  const payload = canonicalHeaderValue(headers['x-amz-content-sha256']);
  if (!payload) throw new S3Error('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256.');
  return {
    ...cred,
    amz,
    signedHeaders: fields.SignedHeaders.split(';').filter(Boolean),
    signature: fields.Signature,
    payload,
    query: pairs,
  };
}

/**
 * Verify AWS Signature V4 on a request: presigned query or Authorization header. Returns
 * null for an unsigned request (the caller decides whether anonymous access is allowed).
 * Expiry, clock skew, the method, the path, the query and every signed header are covered;
 * signatures are compared in constant time.
 */
export async function verifySigV4(req: VerifyInput, opts: VerifyOptions): Promise<S3Auth | null> {
  const q = req.url.indexOf('?');
  const rawPath = q < 0 ? req.url : req.url.slice(0, q);
  let pairs: Array<[string, string]>;
  let uri: string;
  try {
    pairs = parseQuery(q < 0 ? '' : req.url.slice(q + 1));
    uri = canonicalUri(rawPath);
  } catch {
    throw new S3Error('InvalidArgument', 'The request path or query is not validly percent-encoded.');
  }
  const authHeader = req.headers.authorization;
  const queryAuth = pairs.some(([k]) => k === 'X-Amz-Signature' || k === 'X-Amz-Algorithm');
  if (!authHeader && !queryAuth) return null;
  if (authHeader && queryAuth)
    throw new S3Error(
      'InvalidArgument',
      'Only one auth mechanism allowed: the Authorization header or a presigned query.'
    );
  const p = queryAuth ? parseQueryAuth(pairs, opts.now) : parseHeaderAuth(authHeader!, req.headers, pairs);
  const signedAt = parseAmzDate(p.amz);
  if (!queryAuth && Math.abs(opts.now - signedAt) > opts.skewMs) {
    throw new S3Error(
      'RequestTimeTooSkewed',
      'The difference between the request time and the current time is too large.',
      { RequestTime: p.amz, ServerTime: new Date(opts.now).toISOString() }
    );
  }
  if (queryAuth && signedAt > opts.now + opts.skewMs)
    throw new S3Error('AccessDenied', 'Request is not yet valid (X-Amz-Date is in the future).');
  if (!p.signedHeaders.includes('host'))
    throw new S3Error(
      queryAuth ? 'AuthorizationQueryParametersError' : 'AuthorizationHeaderMalformed',
      'SignedHeaders must include host.'
    );

  const cred = await opts.lookup(p.accessKeyId);
  if (!cred)
    throw new S3Error('InvalidAccessKeyId', 'The AWS access key id you provided does not exist in our records.', {
      AWSAccessKeyId: p.accessKeyId,
    });

  const scope = `${p.date}/${p.region}/s3/aws4_request`;
  const key = signingKey(cred.secret, p.date, p.region);
  const headerBlock = p.signedHeaders.map((h) => `${h}:${canonicalHeaderValue(req.headers[h])}\n`).join('');
  const signedHeaders = p.signedHeaders.join(';');
  const cq = canonicalQuery(p.query);
  const sign = (path: string) =>
    hmacHex(key, stringToSign(p.amz, scope, [req.method, path, cq, headerBlock, signedHeaders, p.payload].join('\n')));
  // Most clients encode the path as S3 does (decode + encode is then the same); a few leave
  // characters such as "!" raw and sign them raw, which the second form accepts.
  const ok = sameSignature(sign(uri), p.signature) || (uri !== rawPath && sameSignature(sign(rawPath), p.signature));
  if (!ok)
    throw new S3Error(
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.'
    );
  return {
    accountId: cred.accountId,
    accessKeyId: cred.accessKeyId,
    presigned: queryAuth,
    payload: p.payload,
    signedHeaders: p.signedHeaders,
    seed: { signature: p.signature, amz: p.amz, scope, key },
  };
}

/**
 * AccessDenied when the operator has suspended the account a request acts for: its signed
 * requests, presigned URLs, POST forms and public objects stop with its API keys. The status
 * comes from the key store's cache, so suspension and reinstatement reach S3 within the same
 * bound as keys (at once on this node, through the bus on the others). An unknown account is
 * left to the operation (NoSuchBucket), as before.
 */
export async function requireActiveAccount(
  keys: { accountStatus(accountId: string): Promise<string | null> },
  accountId: string
): Promise<void> {
  const s = await keys.accountStatus(accountId);
  if (s !== null && s !== 'active') {
    throw new S3Error(
      'AccessDenied',
      'The account is suspended: its credentials, presigned URLs and public buckets '
        + 'are refused until the operator resumes it.'
    );
  }
}
