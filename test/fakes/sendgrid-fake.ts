import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { Tap } from '../helpers/tap.js';

// A loopback SendGrid v3 Mail Send API: `POST /v3/mail/send` with a Bearer API key and the JSON
// body, answered 202 with an empty body and `X-Message-Id`, or SendGrid's error JSON
// `{errors: [{message, field, help}]}`; it checks what SendGrid checks (a To in every
// personalization, each address once in one, content types in order, base64 attachments). It
// keeps every message and builds the Event Webhook posts SendGrid would make, signed with ECDSA
// P-256 over the timestamp and the body, with a key pair of its own.

export const SENDGRID_KEY = 'SG.fake-key.0123456789abcdef';

export interface SgMessage {
  id: string;
  body: any;
}

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const error = (message: string, field: string | null = null) => ({ errors: [{ message, field, help: null }] });

/** The next answers instead of an acceptance, as SendGrid words them. */
export const SENDGRID_ERRORS = {
  badRequest: { status: 400, body: error('The from object must be provided for every email send.', 'from') },
  forbidden: { status: 403, body: error('access forbidden') },
  tooLarge: { status: 413, body: error('Payload Too Large') },
  tooMany: { status: 429, body: error('too many requests') },
  internal: { status: 500, body: error('Internal server error') },
} satisfies Record<string, Answer>;

/** What SendGrid refuses in a Mail Send body, or null for one it takes. */
function problem(b: any): ReturnType<typeof error> | null {
  if (!b || typeof b !== 'object') return error('Bad Request', null);
  if (!Array.isArray(b.personalizations) || !b.personalizations.length)
    return error(
      'The personalizations field is required and must have at least one personalization.',
      'personalizations'
    );
  for (const [i, p] of b.personalizations.entries()) {
    if (!Array.isArray(p.to) || !p.to.length)
      return error('The to array is required for all personalization objects.', `personalizations.${i}.to`);
    const all = [...p.to, ...(p.cc ?? []), ...(p.bcc ?? [])].map((a: any) => String(a.email).toLowerCase());
    if (new Set(all).size !== all.length)
      return error(
        'Each email address in the personalization block should be unique between to, cc, and bcc.',
        `personalizations.${i}`
      );
    for (const k of ['cc', 'bcc'])
      if (p[k] && !p[k].length)
        return error(`The ${k} array must have at least one email.`, `personalizations.${i}.${k}`);
  }
  if (!b.from?.email) return error('The from object must be provided for every email send.', 'from');
  if (typeof b.subject !== 'string') return error('The subject is required.', 'subject');
  if (!Array.isArray(b.content) || !b.content.length)
    return error('Unless a valid template_id is provided, the content parameter is required.', 'content');
  if (b.content.some((c: any) => typeof c.value !== 'string' || !c.value))
    return error('The content value must be a string at least one character in length.', 'content.0.value');
  const types = b.content.map((c: any) => c.type);
  if (types.includes('text/plain') && types[0] !== 'text/plain')
    return error('If present, text/plain content must be first.', 'content.0.type');
  for (const [i, a] of (b.attachments ?? []).entries()) {
    if (!a.filename) return error('The attachment filename parameter is required.', `attachments.${i}.filename`);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(a.content ?? ''))
      return error('The attachment content must be base64 encoded.', `attachments.${i}.content`);
  }
  return null;
}

export async function sendgridFake(t: Tap, opts: { maxBytes?: number } = {}) {
  const messages: SgMessage[] = [];
  const answers: Answer[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const json = (a: Answer) =>
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(JSON.stringify(a.body));
    if (req.headers.authorization !== `Bearer ${SENDGRID_KEY}`)
      return json({ status: 401, body: error('The provided authorization grant is invalid, expired, or revoked') });
    if (req.method === 'GET' && req.url === '/v3/scopes') return json({ status: 200, body: { scopes: ['mail.send'] } });
    if (req.method !== 'POST' || req.url !== '/v3/mail/send') return json({ status: 404, body: error('Not found') });
    if (raw.length > (opts.maxBytes ?? 30 * 1024 * 1024)) return json(SENDGRID_ERRORS.tooLarge);
    const answer = answers.shift();
    if (answer) return json(answer);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return json({ status: 400, body: error('Bad Request') });
    }
    const bad = problem(body);
    if (bad) return json({ status: 400, body: bad });
    const id = randomBytes(16).toString('base64url').slice(0, 22);
    messages.push({ id, body });
    res.writeHead(202, { 'x-message-id': id, 'content-length': '0' }).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;

  const keys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const publicKey = keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');

  /** One event as the Event Webhook reports it, for a message the fake took. */
  function event(id: string, kind: string, email: string, extra: Record<string, unknown> = {}) {
    return {
      email,
      timestamp: Math.floor(Date.now() / 1000),
      'smtp-id': `<${id}@geopod-ismtpd-1>`,
      event: kind,
      category: [],
      sg_event_id: randomBytes(16).toString('base64url'),
      sg_message_id: `${id}.filterdrecv-5645d9c87f-6r8xq-1-5E2F6A0C-1.0`,
      ...extra,
    };
  }

  /** A post of `events` as SendGrid signs it: `timestamp` in Unix seconds (now by default). */
  function signed(events: unknown[], o: { timestamp?: number; privateKey?: typeof keys.privateKey } = {}) {
    const body = `${JSON.stringify(events)}\r\n`;
    const timestamp = String(o.timestamp ?? Math.floor(Date.now() / 1000));
    const signature = sign('sha256', Buffer.from(timestamp + body), o.privateKey ?? keys.privateKey).toString('base64');
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'x-twilio-email-event-webhook-signature': signature,
        'x-twilio-email-event-webhook-timestamp': timestamp,
      },
    };
  }

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    messages,
    publicKey,
    failNext: (...a: Answer[]) => answers.push(...a),
    /** SendGrid's 429 with its rate-limit headers, the limit resetting `seconds` from now. */
    rateLimited: (seconds: number): Answer => ({
      ...SENDGRID_ERRORS.tooMany,
      headers: {
        'x-ratelimit-limit': '600',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + seconds),
      },
    }),
    event,
    signed,
  };
}
