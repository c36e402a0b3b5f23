import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import { smsSegments } from '../../core/capabilities/sms-segments.js';
import type { Tap } from '../helpers/tap.js';

// A loopback Twilio Messages API: `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded,
// Basic auth with the account SID and auth token; answers 201 with a Message resource in Twilio's
// JSON, or Twilio's error JSON `{code, message, more_info, status}`. `GET` on the same path lists
// the messages newest first, filtered by To, From and `DateSent>=` (a day), in pages of PageSize
// linked by `next_page_uri`, as Twilio does; a listed message counts as sent when it was made.
// It keeps every message (and counts a body sent twice), and builds the status callbacks Twilio
// would post, signed with X-Twilio-Signature by the `twilio` package itself.

export const TWILIO_SID = `AC${'0123456789abcdef'.repeat(2)}`;
export const TWILIO_TOKEN = 'twilio-test-auth-token-8d1f';

export interface FakeMessage {
  sid: string;
  to: string;
  from: string | null;
  body: string;
  statusCallback: string | null;
  params: Record<string, string>;
  messagingServiceSid: string | null;
  createdAt: Date;
  /** Still queued at Twilio when listed: no date sent, left out by a `DateSent>` filter. */
  queued?: boolean;
}

const twilioError = (code: number, message: string, status: number) => ({
  code,
  message,
  more_info: `https://www.twilio.com/docs/errors/${code}`,
  status,
});

/** The next answers instead of a message, as Twilio words them. */
export const TWILIO_ERRORS = {
  invalidTo: twilioError(21211, "The 'To' number +15005550001 is not a valid phone number.", 400),
  unsubscribed: twilioError(21610, 'Attempt to send to unsubscribed recipient', 400),
  notMobile: twilioError(21614, "'To' number is not a valid mobile number", 400),
  unreachable: twilioError(21612, "The 'To' phone number is not currently reachable via SMS", 400),
  tooMany: twilioError(20429, 'Too Many Requests', 429),
  internal: twilioError(20500, 'Internal Server Error', 500),
} as const;

const rfc2822 = (d: Date) => d.toUTCString().replace('GMT', '+0000');

/** A Message resource in Twilio's JSON: as created (`queued`), or as listed later (`sent` when it was made). */
function resource(m: FakeMessage, listed: boolean) {
  const created = rfc2822(m.createdAt);
  return {
    account_sid: TWILIO_SID,
    api_version: '2010-04-01',
    body: m.body,
    date_created: created,
    date_sent: listed && !m.queued ? created : null,
    date_updated: created,
    direction: 'outbound-api',
    error_code: null,
    error_message: null,
    from: m.from,
    messaging_service_sid: m.messagingServiceSid,
    num_media: '0',
    num_segments: String(smsSegments(m.body).segments),
    price: null,
    price_unit: 'USD',
    sid: m.sid,
    status: listed && !m.queued ? 'sent' : 'queued',
    subresource_uris: { media: `/2010-04-01/Accounts/${TWILIO_SID}/Messages/${m.sid}/Media.json` },
    to: m.to,
    uri: `/2010-04-01/Accounts/${TWILIO_SID}/Messages/${m.sid}.json`,
  };
}

const LIST_PATH = `/2010-04-01/Accounts/${TWILIO_SID}/Messages.json`;

/** `GET …/Messages.json`: newest first, To / From / `DateSent>` filters, `Page` of `PageSize` (50 by default). */
function listPage(messages: FakeMessage[], q: URLSearchParams) {
  const since = q.get('DateSent>');
  if (since !== null && !/^\d{4}-\d\d-\d\d$/.test(since)) return undefined;
  const size = Math.min(1000, Number(q.get('PageSize') ?? 50) || 50);
  const page = Number(q.get('Page') ?? 0) || 0;
  const all = messages
    .filter((m) => (!q.has('To') || m.to === q.get('To')) && (!q.has('From') || m.from === q.get('From')))
    .filter((m) => since === null || (!m.queued && m.createdAt.getTime() >= Date.parse(`${since}T00:00:00Z`)))
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const items = all.slice(page * size, (page + 1) * size);
  const at = (n: number) => {
    const p = new URLSearchParams(q);
    p.set('PageSize', String(size));
    p.set('Page', String(n));
    if (n > 0) p.set('PageToken', `PA${all[n * size - 1].sid}`);
    else p.delete('PageToken');
    return `${LIST_PATH}?${p}`;
  };
  const more = (page + 1) * size < all.length;
  return {
    end: page * size + Math.max(0, items.length - 1),
    first_page_uri: at(0),
    messages: items.map((m) => resource(m, true)),
    next_page_uri: more ? at(page + 1) : null,
    page,
    page_size: size,
    previous_page_uri: page > 0 ? at(page - 1) : null,
    start: page * size,
    uri: at(page),
  };
}

export async function twilioFake(t: Tap) {
  const messages: FakeMessage[] = [];
  const failures: Array<(typeof TWILIO_ERRORS)[keyof typeof TWILIO_ERRORS]> = [];
  const lists: URLSearchParams[] = [];
  /** Runs once a message is made, before Twilio answers the send (a status callback it posts at once). */
  let beforeAnswer: ((m: FakeMessage) => Promise<void>) | undefined;
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    const [path, query = ''] = (req.url ?? '').split('?', 2);
    const m = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\/Messages\.json$/.exec(path);
    if (!m || (req.method !== 'POST' && req.method !== 'GET'))
      return json(404, twilioError(20404, 'The requested resource was not found', 404));
    const basic = `Basic ${Buffer.from(`${TWILIO_SID}:${TWILIO_TOKEN}`).toString('base64')}`;
    if (m[1] !== TWILIO_SID || req.headers.authorization !== basic)
      return json(401, twilioError(20003, 'Authenticate', 401));
    // The next scripted failure answers whichever request comes first, a send or a list.
    const failure = failures.shift();
    if (failure) return json(failure.status, failure);
    if (req.method === 'GET') {
      const q = new URLSearchParams(query);
      lists.push(q);
      const page = listPage(messages, q);
      return page ? json(200, page) : json(400, twilioError(20001, 'Invalid DateSent', 400));
    }
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
      return json(400, twilioError(20001, 'Unsupported content type', 400));
    const form = new URLSearchParams(text);
    const to = form.get('To') ?? '';
    const body = form.get('Body') ?? '';
    if (!/^\+[1-9][0-9]{6,14}$/.test(to)) return json(400, TWILIO_ERRORS.invalidTo);
    if (!form.get('From') && !form.get('MessagingServiceSid'))
      return json(400, twilioError(21603, "A 'From' or 'MessagingServiceSid' parameter is required", 400));
    const msg: FakeMessage = {
      sid: `SM${randomBytes(16).toString('hex')}`,
      to,
      from: form.get('From'),
      body,
      statusCallback: form.get('StatusCallback'),
      params: Object.fromEntries(form),
      messagingServiceSid: form.get('MessagingServiceSid'),
      createdAt: new Date(),
    };
    messages.push(msg);
    await beforeAnswer?.(msg);
    return json(201, resource(msg, false));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;

  /** The status callback Twilio would post for a message: its URL, form body and signed headers. */
  function callback(sid: string, status: string, extra: Record<string, string> = {}, token = TWILIO_TOKEN) {
    const msg = messages.find((x) => x.sid === sid);
    if (!msg?.statusCallback) throw new Error(`message ${sid} asked for no status callback`);
    const params: Record<string, string> = {
      AccountSid: TWILIO_SID,
      ApiVersion: '2010-04-01',
      From: msg.from ?? '',
      MessageSid: sid,
      MessageStatus: status,
      SmsSid: sid,
      SmsStatus: status,
      To: msg.to,
      ...extra,
    };
    const signature = twilio.getExpectedTwilioSignature(token, msg.statusCallback, params);
    return {
      url: msg.statusCallback,
      body: new URLSearchParams(params).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    };
  }

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    messages,
    failNext: (...f: Array<(typeof TWILIO_ERRORS)[keyof typeof TWILIO_ERRORS]>) => failures.push(...f),
    callback,
    /** The queries of every message list read (GET), in order. */
    lists,
    /** What to do once a message is made and before the send is answered (undefined: answer at once). */
    beforeAnswer: (fn: ((m: FakeMessage) => Promise<void>) | undefined) => {
      beforeAnswer = fn;
    },
    /** Bodies sent more than once to the same number (a resend the outbox must never make). */
    duplicates: () => {
      const seen = new Set<string>();
      return messages.filter((x) => {
        const k = `${x.to}\n${x.body}`;
        return seen.has(k) || !seen.add(k);
      }).length;
    },
  };
}
