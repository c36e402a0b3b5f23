import { verify, X509Certificate, type KeyObject } from 'node:crypto';
import { now, VendorFailure } from '../../core/kit/vendor.js';

// Amazon SNS's HTTPS delivery (https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html):
// each post is one JSON message signed by SNS with the key of the X.509 certificate at
// SigningCertURL, over a canonical string of its fields: SignatureVersion 1 is SHA1withRSA,
// 2 is SHA256withRSA.

export interface SnsMessage {
  Type: string;
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  Subject?: string;
  Token?: string;
  SubscribeURL?: string;
}

const NOTIFICATION = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const;
const CONFIRMATION = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'] as const;
const ALGORITHMS: Record<string, string> = { '1': 'sha1', '2': 'sha256' };
/** SNS retries a delivery for at most an hour (its longest delivery policy): an older post is a replay. */
export const MAX_AGE_MS = 60 * 60_000;
const CERT_CACHE = 16;

const refuse = (why: string) => new VendorFailure('auth', `ses (sns): ${why}`);

/** The string SNS signs: each present field's name and value, a line each, in this order. */
export function canonicalString(m: SnsMessage): string {
  const keys = m.Type === 'Notification' ? NOTIFICATION : CONFIRMATION;
  let s = '';
  for (const k of keys) {
    const v = m[k];
    if (typeof v === 'string') s += `${k}\n${v}\n`;
  }
  return s;
}

/** A posted body as an SNS message, or a refusal (a body that is not one is not SNS's). */
export function parseSns(body: string): SnsMessage {
  let m: Record<string, unknown> | null;
  try {
    m = JSON.parse(body);
  } catch {
    throw refuse('the body is not an SNS message (not JSON)');
  }
  for (const k of [
    'Type',
    'MessageId',
    'TopicArn',
    'Message',
    'Timestamp',
    'SignatureVersion',
    'Signature',
    'SigningCertURL',
  ])
    if (typeof m?.[k] !== 'string') throw refuse(`the message has no ${k}`);
  return m as unknown as SnsMessage;
}

/**
 * Verifies SNS messages: the topic is one the operator subscribed, the certificate URL is https
 * on SNS's host, the certificate (fetched once, kept) is valid now, the signature verifies, and
 * the message is not older than an hour.
 */
export class SnsVerifier {
  private readonly certs = new Map<string, Promise<KeyObject>>();

  constructor(
    private readonly opts: {
      /** `sns.<region>.amazonaws.com`, with a port when not 443 (a test's fake). */
      certHost: string;
      topics: string[];
      get: (url: URL) => Promise<string>;
    }
  ) {}

  /** An https URL on SNS's own host, or a refusal: no notification makes the gateway fetch elsewhere. */
  snsUrl(raw: string, what: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refuse(`${what} is not a URL`);
    }
    if (url.protocol !== 'https:' || url.username || url.password || url.host.toLowerCase() !== this.opts.certHost)
      throw refuse(`${what} is not an https URL on ${this.opts.certHost}`);
    return url;
  }

  async verify(m: SnsMessage): Promise<void> {
    if (!this.opts.topics.includes(m.TopicArn))
      throw refuse(`topic ${m.TopicArn} is not one of this instance's sns_topic_arns`);
    const algorithm = ALGORITHMS[m.SignatureVersion];
    if (!algorithm) throw refuse(`SignatureVersion ${m.SignatureVersion} is not 1 or 2`);
    const at = Date.parse(m.Timestamp);
    if (!Number.isFinite(at) || now() - at > MAX_AGE_MS || at - now() > 5 * 60_000)
      throw refuse('the message is older than an hour, or from the future');
    const url = this.snsUrl(m.SigningCertURL, 'SigningCertURL');
    if (!url.pathname.endsWith('.pem')) throw refuse('SigningCertURL does not name a .pem certificate');
    const key = await this.key(url);
    const ok = verify(algorithm, Buffer.from(canonicalString(m), 'utf8'), key, Buffer.from(m.Signature, 'base64'));
    if (!ok) throw refuse('the signature does not verify');
  }

  /** The certificate's public key, fetched once a URL; a failed fetch is not kept. */
  private key(url: URL): Promise<KeyObject> {
    const href = url.href;
    let p = this.certs.get(href);
    if (!p) {
      p = this.opts.get(url).then((pem) => {
        let cert: X509Certificate;
        try {
          cert = new X509Certificate(pem);
        } catch {
          throw refuse(`${href} is not a certificate`);
        }
        const t = now();
        if (t < Date.parse(cert.validFrom) || t > Date.parse(cert.validTo))
          throw refuse(`the certificate at ${href} is not valid now`);
        return cert.publicKey;
      });
      if (this.certs.size >= CERT_CACHE) this.certs.delete(this.certs.keys().next().value!);
      this.certs.set(href, p);
      p.catch(() => this.certs.delete(href));
    }
    return p;
  }
}
