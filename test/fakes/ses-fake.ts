import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID, sign, timingSafeEqual } from 'node:crypto';
import { hmacHex, sha256Hex, signingKey, stringToSign } from '../../core/capabilities/storage/sigv4.js';
import type { Tap } from '../helpers/tap.js';

// A loopback Amazon SES v2 API and the SNS topic it publishes to. SES: `POST
// /v2/email/outbound-emails` (SendEmail, REST-JSON), SigV4-signed for service `ses`, which the
// fake checks with the secret key; it answers `{MessageId}` or SES's errors (the status,
// `x-amzn-ErrorType` and `{message}`), and keeps each raw message. SNS: an HTTPS server with a
// self-signed certificate made by `openssl req` at start, serving that certificate as
// SigningCertURL and the SubscribeURL of a confirmation; messages are signed with its key over
// SNS's canonical string (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA).

export const SES_KEY_ID = 'AKIAFAKESES000000001';
export const SES_SECRET = 'fake/ses/secret/0123456789abcdef';
export const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ses-events';

export interface SesSent {
  id: string;
  body: any;
  raw: string;
}

interface Answer {
  status: number;
  type: string;
  message: string;
}

/** The next answers instead of an acceptance, as SES words them. */
export const SES_ERRORS = {
  rejected: {
    status: 400,
    type: 'MessageRejected',
    message: 'Email address is not verified. The following identities failed the check in region EU-WEST-1: x@y',
  },
  throttled: { status: 429, type: 'TooManyRequestsException', message: 'Maximum sending rate exceeded.' },
  paused: { status: 400, type: 'SendingPausedException', message: 'Sending is paused for this account.' },
  internal: { status: 500, type: 'InternalFailure', message: 'An internal error occurred.' },
} satisfies Record<string, Answer>;

/** Whether the request carries a SigV4 signature of this key for `ses` (false names why). */
function sigv4(method: string, url: string, headers: Record<string, any>, body: Buffer): true | Answer {
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/ses\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      String(headers.authorization ?? '')
    );
  if (!auth || auth[1] !== SES_KEY_ID)
    return {
      status: 403,
      type: 'UnrecognizedClientException',
      message: 'The security token included in the request is invalid.',
    };
  const [, , date, region, signed, signature] = auth;
  const amz = String(headers['x-amz-date'] ?? '');
  const u = new URL(url, 'http://x');
  const names = signed.split(';');
  const canonical = [
    method,
    u.pathname,
    [...u.searchParams]
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .sort()
      .join('&'),
    ...names.map(
      (n) =>
        `${n}:${String(headers[n] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}`
    ),
    '',
    signed,
    sha256Hex(body),
  ].join('\n');
  const want = hmacHex(
    signingKey(SES_SECRET, date, region, 'ses'),
    stringToSign(amz, `${date}/${region}/ses/aws4_request`, canonical)
  );
  if (!amz.startsWith(date) || !timingSafeEqual(Buffer.from(want), Buffer.from(signature)))
    return {
      status: 403,
      type: 'InvalidSignatureException',
      message: 'The request signature we calculated does not match the signature you provided.',
    };
  return true;
}

/** A self-signed certificate for 127.0.0.1 and its key, made by openssl in a temp dir. */
function selfSigned(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sns-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=sns.fake',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' }
    );
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SNS's canonical string, written from its documentation (not the adapter's code). */
function snsCanonical(m: Record<string, string>): string {
  const keys =
    m.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return keys
    .filter((k) => k in m)
    .map((k) => `${k}\n${m[k]}\n`)
    .join('');
}

export interface SignOptions {
  version?: '1' | '2';
  key?: string;
  timestamp?: Date;
  certUrl?: string;
  topic?: string;
  subject?: string;
}

export async function sesFake(t: Tap) {
  const sent: SesSent[] = [];
  const answers: Answer[] = [];
  const confirmations: string[] = [];
  const certFetches: string[] = [];
  const { cert, key } = selfSigned();

  const api = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const fail = (a: Answer) =>
      res
        .writeHead(a.status, {
          'content-type': 'application/json',
          'x-amzn-errortype': `${a.type}:http://internal.amazon.com/coral/com.amazonaws.sesv2/`,
          'x-amzn-requestid': randomUUID(),
        })
        .end(JSON.stringify({ message: a.message }));
    const ok = sigv4(req.method ?? '', req.url ?? '', req.headers, body);
    if (ok !== true) return fail(ok);
    const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
    if (req.method === 'GET' && req.url === '/v2/email/account')
      return json({ SendingEnabled: true, ProductionAccessEnabled: true, EnforcementStatus: 'HEALTHY' });
    if (req.method !== 'POST' || req.url !== '/v2/email/outbound-emails')
      return fail({ status: 404, type: 'NotFoundException', message: 'Not found' });
    const answer = answers.shift();
    if (answer) return fail(answer);
    const input = JSON.parse(body.toString('utf8'));
    const data = input?.Content?.Raw?.Data;
    if (typeof data !== 'string' || !data)
      return fail({ status: 400, type: 'BadRequestException', message: 'Raw message data is required.' });
    const id = `0100018${randomBytes(5).toString('hex').slice(0, 9)}-${randomUUID()}-000000`;
    sent.push({ id, body: input, raw: Buffer.from(data, 'base64').toString('utf8') });
    json({ MessageId: id });
  });

  const sns = createHttpsServer({ cert, key }, (req, res) => {
    const u = new URL(req.url ?? '/', 'https://x');
    if (u.pathname.endsWith('.pem')) {
      certFetches.push(u.pathname);
      return res.writeHead(200, { 'content-type': 'application/x-x509-ca-cert' }).end(cert);
    }
    if (u.searchParams.get('Action') === 'ConfirmSubscription') {
      confirmations.push(u.searchParams.get('Token') ?? '');
      return res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          '<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>'
            + `${u.searchParams.get('TopicArn')}:${randomUUID()}</SubscriptionArn></ConfirmSubscriptionResult>`
            + '</ConfirmSubscriptionResponse>'
        );
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => sns.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => api.close(() => r())));
  t.teardown(() => new Promise<void>((r) => sns.close(() => r())));
  const snsHost = `127.0.0.1:${(sns.address() as AddressInfo).port}`;
  const certUrl = `https://${snsHost}/SimpleNotificationService-9c6465fa7f48f5cacd23014631ec1136.pem`;

  /** An SNS message as SNS would post it, signed (by default with the certificate's key). */
  function signed(fields: Record<string, string>, o: SignOptions = {}) {
    const m: Record<string, string> = {
      MessageId: randomUUID(),
      TopicArn: o.topic ?? TOPIC,
      ...fields,
      Timestamp: (o.timestamp ?? new Date()).toISOString(),
      SignatureVersion: o.version ?? '1',
    };
    if (o.subject !== undefined) m.Subject = o.subject;
    m.Signature = sign(
      m.SignatureVersion === '2' ? 'sha256' : 'sha1',
      Buffer.from(snsCanonical(m)),
      o.key ?? key
    ).toString('base64');
    m.SigningCertURL = o.certUrl ?? certUrl;
    return {
      body: JSON.stringify(m),
      headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': m.Type },
    };
  }

  /** SES's notification of `kind` (Bounce, Complaint, Delivery) for a message it took, through SNS. */
  function notification(
    messageId: string,
    kind: string,
    recipients: string[],
    extra: Record<string, unknown> = {},
    o: SignOptions = {}
  ) {
    const at = new Date().toISOString();
    const mail = {
      timestamp: at,
      source: 'news@mail.example',
      sendingAccountId: '123456789012',
      messageId,
      destination: recipients,
    };
    const detail: Record<string, unknown> =
      kind === 'Bounce'
        ? {
            bounce: {
              bounceType: 'Permanent',
              bounceSubType: 'General',
              timestamp: at,
              feedbackId: randomUUID(),
              bouncedRecipients: recipients.map((emailAddress) => ({
                emailAddress,
                action: 'failed',
                status: '5.1.1',
                diagnosticCode: 'smtp; 550 5.1.1 user unknown',
              })),
              ...extra,
            },
          }
        : kind === 'Complaint'
          ? {
              complaint: {
                complainedRecipients: recipients.map((emailAddress) => ({ emailAddress })),
                complaintFeedbackType: 'abuse',
                timestamp: at,
                ...extra,
              },
            }
          : {
              delivery: {
                recipients,
                smtpResponse: '250 2.6.0 Message received',
                timestamp: at,
                processingTimeMillis: 512,
                ...extra,
              },
            };
    return signed({ Type: 'Notification', Message: JSON.stringify({ notificationType: kind, mail, ...detail }) }, o);
  }

  /** The SubscriptionConfirmation SNS posts when the endpoint is subscribed to a topic. */
  function subscription(o: SignOptions = {}) {
    const token = randomBytes(32).toString('hex');
    const topic = o.topic ?? TOPIC;
    return signed(
      {
        Type: 'SubscriptionConfirmation',
        Token: token,
        Message: `You have chosen to subscribe to the topic ${topic}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
        SubscribeURL: `https://${snsHost}/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topic)}&Token=${token}`,
      },
      o
    );
  }

  return {
    endpoint: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
    snsHost,
    ca: cert,
    sent,
    confirmations,
    certFetches,
    failNext: (...a: Answer[]) => answers.push(...a),
    signed,
    notification,
    subscription,
  };
}
