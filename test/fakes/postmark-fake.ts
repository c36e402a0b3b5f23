import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Tap } from '../helpers/tap.js';

// A loopback Postmark API: `POST /email`, JSON, `X-Postmark-Server-Token`; answers 200
// `{To, SubmittedAt, MessageID, ErrorCode: 0, Message: "OK"}`, or Postmark's error JSON
// `{ErrorCode, Message}` (401 for the token, 422 for the message). It keeps every message and
// builds the webhooks Postmark would post, with the Basic credentials of the webhook's URL.

export const POSTMARK_TOKEN = 'pm-server-token-0b7d3e9a';
export const POSTMARK_HOOK_USER = 'postmark';
export const POSTMARK_HOOK_PASSWORD = 'hook-password-7f3a91c2d8';

export interface PostmarkMessage {
  id: string;
  body: Record<string, any>;
}

const pmError = (status: number, ErrorCode: number, Message: string) => ({ status, ErrorCode, Message });

/** The next answers instead of a message, as Postmark words them. */
export const POSTMARK_ERRORS = {
  invalidRequest: pmError(422, 300, "Invalid 'To' address: 'not an address'."),
  inactiveRecipient: pmError(
    422,
    406,
    'You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: '
      + 'gone@example.org. Inactive recipients are ones that have generated a hard bounce, a spam complaint, '
      + 'or a manual suppression.'
  ),
  notAllowed: pmError(422, 405, 'Not allowed to send: you have run out of credits.'),
  rateLimited: pmError(429, 429, 'Rate limit exceeded.'),
  maintenance: pmError(503, 100, 'Maintenance: Postmark is offline for maintenance.'),
  internal: pmError(500, 0, 'Internal server error.'),
} as const;
type PostmarkError = (typeof POSTMARK_ERRORS)[keyof typeof POSTMARK_ERRORS];

export async function postmarkFake(t: Tap) {
  const messages: PostmarkMessage[] = [];
  const failures: PostmarkError[] = [];
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    if (req.method !== 'POST' || req.url !== '/email') return json(404, { ErrorCode: 404, Message: 'Not found' });
    if (req.headers['x-postmark-server-token'] !== POSTMARK_TOKEN)
      return json(401, { ErrorCode: 10, Message: 'Request does not contain a valid Server token.' });
    if (!String(req.headers['content-type']).startsWith('application/json'))
      return json(415, { ErrorCode: 409, Message: 'JSON required.' });
    const failure = failures.shift();
    if (failure) return json(failure.status, { ErrorCode: failure.ErrorCode, Message: failure.Message });
    let body: Record<string, any>;
    try {
      body = JSON.parse(text);
    } catch {
      return json(422, { ErrorCode: 402, Message: 'Invalid JSON.' });
    }
    if (!body.From || !body.To)
      return json(422, { ErrorCode: 300, Message: 'Invalid email request: From and To required.' });
    if (!body.HtmlBody && !body.TextBody)
      return json(422, { ErrorCode: 300, Message: 'Provide either email TextBody or HtmlBody or both.' });
    const id = randomUUID();
    messages.push({ id, body });
    return json(200, {
      To: body.To,
      SubmittedAt: new Date().toISOString(),
      MessageID: id,
      ErrorCode: 0,
      Message: 'OK',
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;

  /** A webhook Postmark would post about a message: its JSON and the Basic credentials of its URL. */
  function webhook(
    record: Record<string, unknown>,
    creds = { user: POSTMARK_HOOK_USER, password: POSTMARK_HOOK_PASSWORD }
  ) {
    return {
      body: JSON.stringify({ ServerID: 23, MessageStream: 'outbound', Tag: '', Metadata: {}, ...record }),
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${creds.user}:${creds.password}`).toString('base64')}`,
      },
    };
  }
  const recipient = (id: string) => {
    const msg = messages.find((m) => m.id === id);
    if (!msg) throw new Error(`postmark fake sent no message ${id}`);
    return String(msg.body.To)
      .split(', ')[0]
      .replace(/^.*<(.+)>$/, '$1');
  };
  const bounce = (id: string, type: string, typeCode: number) =>
    webhook({
      RecordType: 'Bounce',
      ID: 4323372036,
      Type: type,
      TypeCode: typeCode,
      MessageID: id,
      Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
      Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
      Email: recipient(id),
      From: messages.find((m) => m.id === id)!.body.From,
      BouncedAt: new Date().toISOString(),
      Inactive: type === 'HardBounce',
      CanActivate: true,
    });

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    messages,
    failNext: (...f: PostmarkError[]) => failures.push(...f),
    webhook,
    delivery: (id: string) =>
      webhook({
        RecordType: 'Delivery',
        MessageID: id,
        Recipient: recipient(id),
        DeliveredAt: new Date().toISOString(),
        Details: 'Test delivery webhook details',
      }),
    hardBounce: (id: string) => bounce(id, 'HardBounce', 1),
    softBounce: (id: string) => bounce(id, 'SoftBounce', 4096),
    spamComplaint: (id: string) =>
      webhook({
        RecordType: 'SpamComplaint',
        ID: 42,
        Type: 'SpamComplaint',
        TypeCode: 512,
        MessageID: id,
        Email: recipient(id),
        BouncedAt: new Date().toISOString(),
      }),
  };
}
