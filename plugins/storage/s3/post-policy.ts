import type { Credential } from '../credentials.js';
import { S3Error } from './errors.js';
import { ALGORITHM, amzDate, hmacHex, signingKey } from '../../../core/kit/area.js';
import { sameSignature } from './sigv4-request.js';

// S3 POST policies (browser form uploads, "Authenticating Requests in Browser-Based Uploads
// Using POST"): a base64 JSON document of an expiration and conditions, signed with the
// SigV4 signing key of the credential's date and region. The form's fields must satisfy
// every condition, and every field but the signature, the policy, the file and x-ignore-*
// must be named by one.

export interface PolicyForm {
  url: string;
  fields: Record<string, string>;
}

/** The form for one key on the gateway's endpoint, at most `maxBytes` bytes. */
export function signPostPolicy(p: {
  endpoint: string;
  bucket: string;
  key: string;
  region: string;
  accessKeyId: string;
  secret: string;
  expiresSeconds: number;
  maxBytes: number;
  now?: number;
}): PolicyForm {
  const now = p.now ?? Date.now();
  const amz = amzDate(now);
  const credential = `${p.accessKeyId}/${amz.slice(0, 8)}/${p.region}/s3/aws4_request`;
  const policy = Buffer.from(
    JSON.stringify({
      expiration: new Date(now + p.expiresSeconds * 1000).toISOString(),
      conditions: [
        { bucket: p.bucket },
        { key: p.key },
        ['content-length-range', 0, p.maxBytes],
        ['starts-with', '$Content-Type', ''],
        { 'x-amz-algorithm': ALGORITHM },
        { 'x-amz-credential': credential },
        { 'x-amz-date': amz },
      ],
    })
  ).toString('base64');
  const signature = hmacHex(signingKey(p.secret, amz.slice(0, 8), p.region), policy);
  return {
    url: `${p.endpoint.replace(/\/+$/, '')}/${p.bucket}`,
    fields: {
      key: p.key,
      'x-amz-algorithm': ALGORITHM,
      'x-amz-credential': credential,
      'x-amz-date': amz,
      policy,
      'x-amz-signature': signature,
    },
  };
}

/** What a verified policy allows: the signer, and the size range of the file. */
export interface CheckedPolicy {
  credential: Credential;
  minBytes: number;
  maxBytes: number | undefined;
}

type Condition = { op: 'eq' | 'starts-with'; field: string; value: string } | { op: 'range'; min: number; max: number };

const denied = (why: string) => new S3Error('AccessDenied', `Invalid according to Policy: ${why}`);
const malformed = (why: string) => new S3Error('InvalidPolicyDocument', `Invalid Policy: ${why}`);

function parseConditions(raw: unknown): Condition[] {
  if (!Array.isArray(raw)) throw malformed('conditions must be an array.');
  return raw.map((c): Condition => {
    if (Array.isArray(c)) {
      const [op, a, b] = c as unknown[];
      if (typeof op === 'string' && op.toLowerCase() === 'content-length-range') {
        const min = Number(a);
        const max = Number(b);
        if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min)
          throw malformed('content-length-range needs two integers, min ≤ max.');
        return { op: 'range', min, max };
      }
      if (
        (op === 'eq' || op === 'starts-with')
        && typeof a === 'string'
        && a.startsWith('$')
        && typeof b === 'string'
      ) {
        return { op, field: a.slice(1).toLowerCase(), value: b };
      }
      throw malformed(`condition ${JSON.stringify(c)} is not one of eq, starts-with, content-length-range.`);
    }
    if (c && typeof c === 'object' && Object.keys(c).length === 1) {
      const [[field, value]] = Object.entries(c as Record<string, unknown>);
      if (typeof value === 'string') return { op: 'eq', field: field.replace(/^\$/, '').toLowerCase(), value };
    }
    throw malformed(`condition ${JSON.stringify(c)} is not valid.`);
  });
}

/**
 * Check a form's policy against its fields (names lower-cased) and the bucket it was posted
 * to: algorithm, credential scope, signature (constant time, against the secret `lookup`
 * finds, as for signed requests), expiry, every condition, and no field that no condition names.
 */
export async function checkPostPolicy(
  fields: Map<string, string>,
  bucket: string,
  region: string,
  now: number,
  lookup: (accessKeyId: string) => Promise<Credential | null>
): Promise<CheckedPolicy> {
  const policy = fields.get('policy');
  const signature = fields.get('x-amz-signature');
  if (!policy || !signature)
    throw new S3Error(
      'AccessDenied',
      'Bucket POST must contain the fields policy and x-amz-signature; anonymous form uploads are not accepted.'
    );
  if (fields.get('x-amz-algorithm') !== ALGORITHM)
    throw new S3Error('InvalidArgument', `x-amz-algorithm must be ${ALGORITHM}.`, { ArgumentName: 'x-amz-algorithm' });
  const cred = (fields.get('x-amz-credential') ?? '').split('/');
  if (cred.length !== 5 || !/^\d{8}$/.test(cred[1]) || cred[3] !== 's3' || cred[4] !== 'aws4_request') {
    throw new S3Error('InvalidArgument', 'x-amz-credential must be AKID/YYYYMMDD/region/s3/aws4_request.', {
      ArgumentName: 'x-amz-credential',
    });
  }
  if (cred[2] !== region)
    throw new S3Error('AuthorizationHeaderMalformed', `The credential's region must be ${region}.`);
  const credential = await lookup(cred[0]);
  if (!credential)
    throw new S3Error('InvalidAccessKeyId', 'The AWS access key id you provided does not exist in our records.', {
      AWSAccessKeyId: cred[0],
    });
  if (!sameSignature(hmacHex(signingKey(credential.secret, cred[1], cred[2]), policy), signature)) {
    throw new S3Error(
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.'
    );
  }

  let doc: { expiration?: unknown; conditions?: unknown };
  try {
    doc = JSON.parse(Buffer.from(policy, 'base64').toString('utf8'));
  } catch {
    throw malformed('the policy is not base64-encoded JSON.');
  }
  const expires = typeof doc.expiration === 'string' ? Date.parse(doc.expiration) : NaN;
  if (!Number.isFinite(expires)) throw malformed('expiration must be an ISO 8601 date.');
  if (expires <= now) throw denied('Policy expired.');

  const values = new Map(fields);
  values.set('bucket', bucket);
  const named = new Set(['policy', 'x-amz-signature', 'file']);
  let minBytes = 0;
  let maxBytes: number | undefined;
  for (const c of parseConditions(doc.conditions)) {
    if (c.op === 'range') {
      minBytes = Math.max(minBytes, c.min);
      maxBytes = Math.min(maxBytes ?? Infinity, c.max);
      continue;
    }
    named.add(c.field);
    const got = values.get(c.field) ?? '';
    const ok = c.op === 'eq' ? got === c.value : got.startsWith(c.value);
    if (!ok) throw denied(`Policy Condition failed: ["${c.op}", "$${c.field}", ${JSON.stringify(c.value)}]`);
  }
  const extra = [...fields.keys()].filter((k) => !named.has(k) && !k.startsWith('x-ignore-'));
  if (extra.length) throw denied(`Extra input fields: ${extra.join(', ')}`);
  return { credential, minBytes, maxBytes };
}
