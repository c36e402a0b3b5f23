import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Tap } from '../helpers/tap.js';

// A loopback Resend API: `POST /emails`, JSON, `Authorization: Bearer <key>`; answers 200 `{id}`
// or Resend's error JSON `{statusCode, name, message}`. It honours `Idempotency-Key` as Resend
// does (the same key and body answer the first id and send nothing; the same key with another
// body is 409), keeps every message, and builds the webhooks Resend would post, signed as Svix
// signs them (the `standardwebhooks` package's signer under Svix's `svix-*` header names).

export const RESEND_KEY = 're_test_4f1c9a7e2b';
export const RESEND_WEBHOOK_SECRET = `whsec_${Buffer.from('resend-fake-signing-key-32-bytes').toString('base64')}`;

export interface ResendMessage {
  id: string;
  body: Record<string, any>;
  idempotencyKey: string | undefined;
}

const resendError = (statusCode: number, name: string, message: string) => ({ statusCode, name, message });

/** The next answers instead of a message, as Resend words them (`retryAfter` seconds on 429s). */
export const RESEND_ERRORS = {
  rateLimited: {
    ...resendError(429, 'rate_limit_exceeded', 'Too many requests. You can only make 2 requests per second.'),
    retryAfter: '2',
  },
  dailyQuota: resendError(429, 'daily_quota_exceeded', 'You have reached your daily email sending quota.'),
  unverifiedDomain: resendError(403, 'validation_error', 'The example.net domain is not verified.'),
  invalidAttachment: resendError(422, 'invalid_attachment', 'Attachment must have either a content or path.'),
  internal: resendError(500, 'application_error', 'An unexpected error occurred.'),
} as const;
type ResendError = (typeof RESEND_ERRORS)[keyof typeof RESEND_ERRORS];

export async function resendFake(t: Tap) {
  const messages: ResendMessage[] = [];
  const failures: ResendError[] = [];
  const keys = new Map<string, { body: string; id: string }>();
  let requests = 0;
  /** Runs once a message is kept, before Resend answers the send (its latency, in a soak). */
  let beforeAnswer: ((m: ResendMessage) => Promise<void>) | undefined;
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    requests++;
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (req.method !== 'POST' || req.url !== '/emails') return json(404, resendError(404, 'not_found', 'Not found'));
    const auth = req.headers.authorization;
    if (!auth) return json(401, resendError(401, 'missing_api_key', 'Missing API key in the authorization header'));
    if (auth !== `Bearer ${RESEND_KEY}`) return json(403, resendError(403, 'invalid_api_key', 'API key is invalid'));
    const failure = failures.shift();
    if (failure) {
      const { retryAfter, ...body } = failure as ResendError & { retryAfter?: string };
      return json(failure.statusCode, body, retryAfter ? { 'retry-after': retryAfter } : {});
    }
    const key = req.headers['idempotency-key'] as string | undefined;
    if (key !== undefined && (key.length < 1 || key.length > 256))
      return json(400, resendError(400, 'invalid_idempotency_key', 'The key must be between 1-256 chars.'));
    const earlier = key ? keys.get(key) : undefined;
    if (earlier && earlier.body !== text)
      return json(
        409,
        resendError(409, 'invalid_idempotent_request', 'Same idempotency key used with a different request payload.')
      );
    if (earlier) return json(200, { id: earlier.id });
    let body: Record<string, any>;
    try {
      body = JSON.parse(text);
    } catch {
      return json(400, resendError(400, 'validation_error', 'Invalid JSON'));
    }
    for (const field of ['from', 'to', 'subject'])
      if (!body[field] || (Array.isArray(body[field]) && !body[field].length))
        return json(422, resendError(422, 'missing_required_field', `Missing \`${field}\` field.`));
    const id = randomUUID();
    if (key) keys.set(key, { body: text, id });
    const msg = { id, body, idempotencyKey: key };
    messages.push(msg);
    await beforeAnswer?.(msg);
    return json(200, { id });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;

  /**
   * The webhook Resend would post about a message it sent: `{type, created_at, data}` signed
   * with the secret (another one forges it) at `at` (an old time makes a replay).
   */
  function webhook(
    type: string,
    id: string,
    data: Record<string, unknown> = {},
    opts: { secret?: string; at?: Date } = {}
  ) {
    const msg = messages.find((m) => m.id === id);
    if (!msg) throw new Error(`resend fake sent no message ${id}`);
    const at = opts.at ?? new Date();
    const body = JSON.stringify({
      type,
      created_at: at.toISOString(),
      data: {
        created_at: at.toISOString(),
        email_id: id,
        from: msg.body.from,
        // Resend names the recipients by address alone.
        to: (msg.body.to as string[]).map((a) => a.match(/<([^<>]+)>$/)?.[1] ?? a),
        subject: msg.body.subject,
        ...data,
      },
    });
    const svixId = `msg_${randomUUID().replace(/-/g, '')}`;
    const signature = new Webhook(opts.secret ?? RESEND_WEBHOOK_SECRET).sign(svixId, at, body);
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'svix-id': svixId,
        'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
        'svix-signature': signature,
      },
    };
  }

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    messages,
    /** Requests that reached the fake, a replayed idempotency key included. */
    requests: () => requests,
    failNext: (...f: ResendError[]) => failures.push(...f),
    webhook,
    /** What to do once a message is kept and before the send is answered (undefined: answer at once). */
    beforeAnswer: (fn: ((m: ResendMessage) => Promise<void>) | undefined) => {
      beforeAnswer = fn;
    },
  };
}
