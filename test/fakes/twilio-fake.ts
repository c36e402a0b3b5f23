import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import { smsSegments } from '../../core/capabilities/sms-segments.js';
import type { Tap } from '../helpers/tap.js';

// A loopback Twilio Messages API: `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded,
// Basic auth with the account SID and auth token; answers 201 with a Message resource in Twilio's
// JSON, or Twilio's error JSON `{code, message, more_info, status}`. It keeps every message (and
// counts a body sent twice), and builds the status callbacks Twilio would post, signed with
// X-Twilio-Signature by the `twilio` package itself.

export const TWILIO_SID = `AC${'0123456789abcdef'.repeat(2)}`;
export const TWILIO_TOKEN = 'twilio-test-auth-token-8d1f';

export interface FakeMessage {
  sid: string;
  to: string;
  from: string | null;
  body: string;
  statusCallback: string | null;
  params: Record<string, string>;
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
  tooMany: twilioError(20429, 'Too Many Requests', 429),
  internal: twilioError(20500, 'Internal Server Error', 500),
} as const;

export async function twilioFake(t: Tap) {
  const messages: FakeMessage[] = [];
  const failures: Array<(typeof TWILIO_ERRORS)[keyof typeof TWILIO_ERRORS]> = [];
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    const m = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\/Messages\.json$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !m) return json(404, twilioError(20404, 'The requested resource was not found', 404));
    const basic = `Basic ${Buffer.from(`${TWILIO_SID}:${TWILIO_TOKEN}`).toString('base64')}`;
    if (m[1] !== TWILIO_SID || req.headers.authorization !== basic)
      return json(401, twilioError(20003, 'Authenticate', 401));
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
      return json(400, twilioError(20001, 'Unsupported content type', 400));
    const failure = failures.shift();
    if (failure) return json(failure.status, failure);
    const form = new URLSearchParams(text);
    const to = form.get('To') ?? '';
    const body = form.get('Body') ?? '';
    if (!/^\+[1-9][0-9]{6,14}$/.test(to)) return json(400, TWILIO_ERRORS.invalidTo);
    if (!form.get('From') && !form.get('MessagingServiceSid'))
      return json(400, twilioError(21603, "A 'From' or 'MessagingServiceSid' parameter is required", 400));
    const sid = `SM${randomBytes(16).toString('hex')}`;
    messages.push({
      sid,
      to,
      from: form.get('From'),
      body,
      statusCallback: form.get('StatusCallback'),
      params: Object.fromEntries(form),
    });
    const now = new Date().toUTCString().replace('GMT', '+0000');
    return json(201, {
      account_sid: TWILIO_SID,
      api_version: '2010-04-01',
      body,
      date_created: now,
      date_sent: null,
      date_updated: now,
      direction: 'outbound-api',
      error_code: null,
      error_message: null,
      from: form.get('From'),
      messaging_service_sid: form.get('MessagingServiceSid'),
      num_media: '0',
      num_segments: String(smsSegments(body).segments),
      price: null,
      price_unit: 'USD',
      sid,
      status: 'queued',
      subresource_uris: { media: `/2010-04-01/Accounts/${TWILIO_SID}/Messages/${sid}/Media.json` },
      to,
      uri: `/2010-04-01/Accounts/${TWILIO_SID}/Messages/${sid}.json`,
    });
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
