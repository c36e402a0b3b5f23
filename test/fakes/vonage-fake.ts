import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { smsSegments } from '../../core/capabilities/sms-segments.js';
import type { Tap } from '../helpers/tap.js';

// A loopback Vonage SMS API: `POST /sms/json`, a form or JSON, authenticated by `api_key` and
// `api_secret` or by `api_key`, `timestamp` and `sig` (the account's signature method). It
// answers 200 as Vonage does, refusals included: `{"message-count", messages: [...]}` with a
// status per part ("0" sent, else Vonage's code and `error-text`). It keeps every message and
// builds the delivery receipts Vonage would send to its `callback`: GET with a query string
// (Vonage's default), a POST form or POST-JSON, signed as Vonage signs webhooks when asked.
// The signing here is written from Vonage's page on signing messages, apart from the adapter's.

export const VONAGE_KEY = 'a1b2c3d4';
export const VONAGE_SECRET = 'vonage-test-api-secret-9e2';
export const VONAGE_SIGNATURE_SECRET = 'vonage-test-signature-secret-4f1c';

export type FakeMethod = 'md5hash' | 'md5' | 'sha1' | 'sha256' | 'sha512';

/** A signature as Vonage makes one: md5hash in lower-case hex, its HMACs in upper case. */
export function vonageSign(method: FakeMethod, secret: string, params: Record<string, string>): string {
  const pairs = Object.keys(params)
    .filter((k) => k !== 'sig')
    .sort()
    .map((k) => `&${k}=${params[k].split('&').join('_').split('=').join('_')}`);
  const text = pairs.join('');
  if (method === 'md5hash') return createHash('md5').update(`${text}${secret}`).digest('hex');
  return createHmac(method, secret).update(text).digest('hex').toUpperCase();
}

export interface FakeSms {
  /** The first part's message-id, the one a send answers with first. */
  id: string;
  ids: string[];
  to: string;
  from: string;
  text: string;
  type: string;
  clientRef: string | null;
  callback: string | null;
  signed: boolean;
  params: Record<string, string>;
}

/** Refusals as Vonage words them, by status. */
export const VONAGE_REFUSALS: Record<string, string> = {
  '1': 'Throughput Rate Exceeded - please wait [ 1 ] and retry',
  '2': 'Missing from param',
  '3': 'Invalid to param',
  '4': 'Bad Credentials',
  '5': 'Internal Error',
  '7': 'Number barred',
  '9': 'Quota Exceeded - rejected',
  '14': 'Invalid Signature',
  '29': 'Non White-listed Destination - rejected',
  '32': 'Cannot use both signature and api secret',
};

export async function vonageFake(t: Tap, opts: { method?: FakeMethod } = {}) {
  const method = opts.method ?? 'md5hash';
  const messages: FakeSms[] = [];
  /** Statuses the next sends answer instead of sending: one a send, or 'partial' (the 2nd part refused). */
  const failures: string[] = [];
  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const refuse = (status: string, text = VONAGE_REFUSALS[status] ?? 'Error') =>
      json(200, { 'message-count': '1', messages: [{ status, 'error-text': text }] });
    if (req.method !== 'POST' || req.url !== '/sms/json') return json(404, { error: 'not found' });
    const p: Record<string, string> = {};
    if (String(req.headers['content-type']).startsWith('application/json'))
      for (const [k, v] of Object.entries(JSON.parse(raw || '{}'))) p[k] = String(v);
    else for (const [k, v] of new URLSearchParams(raw)) p[k] = v;
    if (p.api_key !== VONAGE_KEY) return refuse('4');
    if (p.sig !== undefined && p.api_secret !== undefined) return refuse('32');
    const signed = p.sig !== undefined;
    if (signed) {
      const want = vonageSign(method, VONAGE_SIGNATURE_SECRET, p).toLowerCase();
      const fresh = Math.abs(Date.now() / 1000 - Number(p.timestamp)) <= 300;
      if (p.sig.toLowerCase() !== want || !fresh) return refuse('14');
    } else if (p.api_secret !== VONAGE_SECRET) return refuse('4');
    if (!p.from) return refuse('2');
    if (!p.text) return refuse('2', 'Missing text param');
    if (!/^[1-9][0-9]{6,14}$/.test(p.to ?? '')) return refuse('3');
    const failure = failures.shift();
    const count = smsSegments(p.text).segments;
    if (failure && failure !== 'partial') return refuse(failure);
    const ids = Array.from({ length: count }, () => `0A0000${randomBytes(6).toString('hex').toUpperCase()}`);
    const parts = ids.map((id, i) =>
      failure === 'partial' && i > 0
        ? { status: '5', 'error-text': VONAGE_REFUSALS['5'] }
        : {
            to: p.to,
            'message-id': id,
            status: '0',
            'remaining-balance': '10.51200000',
            'message-price': '0.00809000',
            network: '310004',
            ...(p['client-ref'] ? { 'client-ref': p['client-ref'] } : {}),
          }
    );
    messages.push({
      id: ids[0],
      ids,
      to: p.to,
      from: p.from,
      text: p.text,
      type: p.type ?? 'text',
      clientRef: p['client-ref'] ?? null,
      callback: p.callback ?? null,
      signed,
      params: p,
    });
    return json(200, { 'message-count': String(count), messages: parts });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;

  /**
   * The delivery receipt Vonage would send for a message's part: where, how (GET by default)
   * and, unless `sign: false`, signed with `secret` at `timestamp` (Unix seconds, now by default).
   */
  function receipt(
    messageId: string,
    status: string,
    o: {
      errCode?: string;
      as?: 'GET' | 'POST' | 'POST-JSON';
      sign?: boolean;
      secret?: string;
      timestamp?: number;
      apiKey?: string;
    } = {}
  ) {
    const msg = messages.find((m) => m.ids.includes(messageId));
    if (!msg?.callback) throw new Error(`message ${messageId} asked for no receipt`);
    const at = new Date();
    // scts: when the carrier reported, YYMMDDHHMM.
    const scts = at.toISOString().replace(/\D/g, '').slice(2, 12);
    const params: Record<string, string> = {
      msisdn: msg.to,
      to: msg.from,
      'network-code': '310004',
      messageId,
      price: '0.00809000',
      status,
      scts,
      'err-code': o.errCode ?? '0',
      'api-key': o.apiKey ?? VONAGE_KEY,
      ...(msg.clientRef ? { 'client-ref': msg.clientRef } : {}),
      'message-timestamp': at.toISOString().slice(0, 19).replace('T', ' '),
    };
    if (o.sign !== false) {
      params.timestamp = String(o.timestamp ?? Math.floor(Date.now() / 1000));
      params.nonce = randomUUID();
      params.sig = vonageSign(method, o.secret ?? VONAGE_SIGNATURE_SECRET, params);
    }
    const as = o.as ?? 'GET';
    if (as === 'GET')
      return { method: 'GET' as const, url: `${msg.callback}?${new URLSearchParams(params)}`, headers: {}, body: '' };
    if (as === 'POST')
      return {
        method: 'POST' as const,
        url: msg.callback,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(params).toString(),
      };
    return {
      method: 'POST' as const,
      url: msg.callback,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
    };
  }

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    method,
    messages,
    failNext: (...statuses: string[]) => failures.push(...statuses),
    receipt,
    /** Texts sent more than once to the same number (a resend the outbox must never make). */
    duplicates: () => {
      const seen = new Set<string>();
      return messages.filter((x) => {
        const k = `${x.to}\n${x.text}`;
        return seen.has(k) || !seen.add(k);
      }).length;
    },
  };
}
