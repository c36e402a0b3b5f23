import { timingSafeEqual } from 'node:crypto';
import { rfc3986 } from '../../../core/kit/area.js';

// The request side of Signature Version 4, which only the S3 endpoint needs: a raw request's
// path, query and headers in canonical form, and the comparison of signatures. Computing a
// signature is core/capabilities/storage/sigv4.ts (vendors presign with it too).

const UNRESERVED_PATH = /^[A-Za-z0-9\-._~/]*$/;

/** The canonical URI of a raw request path: each segment decoded, then encoded once. */
export function canonicalUri(rawPath: string): string {
  // Only unreserved characters: decoding and encoding again would change nothing.
  if (UNRESERVED_PATH.test(rawPath)) return rawPath;
  return rawPath
    .split('/')
    .map((seg) => rfc3986(decodeURIComponent(seg)))
    .join('/');
}

/** Decoded (name, value) pairs of a raw query string, in order. */
export function parseQuery(raw: string): Array<[string, string]> {
  if (!raw) return [];
  return raw
    .split('&')
    .filter(Boolean)
    .map((part) => {
      const i = part.indexOf('=');
      const name = i < 0 ? part : part.slice(0, i);
      const value = i < 0 ? '' : part.slice(i + 1);
      return [decodeURIComponent(name), decodeURIComponent(value)];
    });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A header value as its signer saw it. Node reads header bytes as Latin-1, but a signature is
 * over the value's UTF-8: bytes that are valid UTF-8 (boto3, Go, curl send `café` so) are read
 * as such; other bytes (Node's own client sends `é` as one Latin-1 byte of the same string)
 * stay as read.
 */
export function canonicalHeaderValue(v: string | string[] | undefined): string {
  const s = Array.isArray(v) ? v.join(',') : (v ?? '');
  return asSigned(s).trim().replace(/\s+/g, ' ');
}

function asSigned(s: string): string {
  if (!/[\x80-\xff]/.test(s)) return s;
  try {
    return utf8.decode(Buffer.from(s, 'latin1'));
  } catch {
    return s;
  }
}

/** Constant-time comparison of two hex signatures. */
export function sameSignature(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const x = Buffer.from(a, 'latin1');
  return timingSafeEqual(x, Buffer.from(b, 'latin1'));
}
