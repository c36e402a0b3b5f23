import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Tap } from '../helpers/tap.js';
import { DECLINES, id, PROCESSING, parseForm, SUCCEEDS, THREE_DS, type Obj } from './stripe-fake-wire.js';

// A loopback Stripe API for the PaymentIntents, Refunds and Checkout Sessions the `stripe`
// adapter calls through the official SDK: form-encoded bodies with bracketed keys, Bearer auth,
// Stripe's JSON objects and error shape (`{ error: { type, code, decline_code, message, param,
// payment_intent } }`), and Stripe's idempotency: a key replays its first answer (header
// `idempotent-replayed: true`), with other parameters it is 400 `idempotency_error`. Its test
// payment methods are Stripe's; `requires_action` sends the payer to a page on this fake (the
// stand-in for the bank's 3-D Secure page), whose complete/fail POSTs move the PaymentIntent.
// It lists a PaymentIntent's refunds as Stripe does (`GET /v1/refunds`, newest first, paged by
// `starting_after`), forgets idempotency keys on demand (Stripe's 24 h), makes webhook events
// of its objects, and may hold each answer `latencyMs` (the window a soak's kill -9 lands in).

export { parseForm } from './stripe-fake-wire.js';

export const STRIPE_KEY = 'sk_test_fake_51Hx0000000000000000000000';

export interface StripeFake {
  url: string;
  intents: Map<string, Obj>;
  refunds: Obj[];
  sessions: Map<string, Obj>;
  /** Requests by path, and the Idempotency-Key headers seen. */
  calls: Array<{ method: string; path: string; idempotencyKey?: string; body: Obj }>;
  /** Act on the next create, keep its idempotent answer, then drop the connection unanswered. */
  dropNextAnswer(): void;
  /** A `checkout.session.*` event of a session, as Stripe would post it (unsigned JSON). */
  sessionEvent(sessionId: string, type: string, patch?: Obj): string;
  /** An event of a PaymentIntent or a Refund as it is now (unsigned JSON). */
  event(type: string, object: Obj): string;
  /** What the next refunds are made as (`succeeded`, or `pending` as a bank refund). */
  refundsAs(status: string): void;
  /** Forget the idempotency keys (of creates at `path`, or all), as Stripe does after 24 h. */
  forgetKeys(path?: string): void;
  /** Creates kept but not yet answered (answers wait `latencyMs`). */
  held(): number;
  /** Called after each create is kept, before it is answered. */
  onKept(fn: () => void): void;
}

export async function stripeFake(t: Tap, { latencyMs = 0 } = {}): Promise<StripeFake> {
  const intents = new Map<string, Obj>();
  const sessions = new Map<string, Obj>();
  const refunds: Obj[] = [];
  const calls: StripeFake['calls'] = [];
  const keyed = new Map<string, { params: string; status: number; body: string }>();
  let drop = false;
  let base = '';
  let refundStatus = 'succeeded';
  let held = 0;
  let kept = () => {};

  const send = (res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req'), ...extra });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const fail = (status: number, error: Obj) => ({ status, body: { error: { ...error } } });

  function createIntent(p: Obj): { status: number; body: Obj } {
    const amount = Number(p.amount);
    if (!Number.isInteger(amount) || amount < 1)
      return fail(400, {
        type: 'invalid_request_error',
        code: 'parameter_invalid_integer',
        param: 'amount',
        message: 'Invalid integer',
      });
    const pm = p.payment_method;
    if (!SUCCEEDS.has(pm) && !THREE_DS.has(pm) && !PROCESSING.has(pm) && !DECLINES[pm])
      return fail(400, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        param: 'payment_method',
        message: `No such PaymentMethod: '${pm}'`,
      });
    const pi: Obj = {
      id: id('pi'),
      object: 'payment_intent',
      amount,
      amount_received: 0,
      currency: p.currency,
      customer: p.customer ?? null,
      payment_method: pm,
      description: p.description ?? null,
      metadata: p.metadata ?? {},
      status: 'succeeded',
      next_action: null,
      last_payment_error: null,
      created: Math.floor(Date.now() / 1000),
    };
    intents.set(pi.id, pi);
    if (DECLINES[pm]) {
      const e = { type: 'card_error', ...DECLINES[pm] };
      Object.assign(pi, { status: 'requires_payment_method', last_payment_error: e });
      return fail(402, { ...e, payment_intent: pi });
    }
    if (THREE_DS.has(pm)) {
      Object.assign(pi, {
        status: 'requires_action',
        next_action: {
          type: 'redirect_to_url',
          redirect_to_url: { url: `${base}/3ds/${pi.id}`, return_url: p.return_url },
        },
      });
    } else if (PROCESSING.has(pm)) pi.status = 'processing';
    else pi.amount_received = amount;
    return { status: 200, body: pi };
  }

  function createRefund(p: Obj): { status: number; body: Obj } {
    const pi = intents.get(p.payment_intent);
    if (!pi)
      return fail(400, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        param: 'payment_intent',
        message: `No such payment_intent: '${p.payment_intent}'`,
      });
    if (pi.status !== 'succeeded')
      return fail(400, {
        type: 'invalid_request_error',
        code: 'charge_not_succeeded',
        message: 'This PaymentIntent has not succeeded.',
      });
    const done = refunds
      .filter((r) => r.payment_intent === pi.id && r.status !== 'failed')
      .reduce((s, r) => s + r.amount, 0);
    const left = pi.amount - done;
    if (left === 0)
      return fail(400, {
        type: 'invalid_request_error',
        code: 'charge_already_refunded',
        message: 'Charge has already been refunded.',
      });
    const amount = p.amount === undefined ? left : Number(p.amount);
    if (amount > left)
      return fail(400, {
        type: 'invalid_request_error',
        code: 'amount_too_large',
        param: 'amount',
        message: `Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`,
      });
    const r = {
      id: id('re'),
      object: 'refund',
      amount,
      currency: pi.currency,
      payment_intent: pi.id,
      status: refundStatus,
      metadata: p.metadata ?? {},
      created: Math.floor(Date.now() / 1000),
    };
    refunds.push(r);
    return { status: 200, body: r };
  }

  function createSession(p: Obj): { status: number; body: Obj } {
    const item = p.line_items?.['0'];
    const s = {
      id: id('cs_test'),
      object: 'checkout.session',
      mode: p.mode,
      url: '',
      amount_total: Number(item.price_data.unit_amount) * Number(item.quantity),
      currency: item.price_data.currency,
      client_reference_id: p.client_reference_id ?? null,
      metadata: p.metadata ?? {},
      payment_status: 'unpaid',
      status: 'open',
      success_url: p.success_url,
      expires_at: Number(p.expires_at),
    };
    s.url = `${base}/pay/${s.id}`;
    sessions.set(s.id, s);
    return { status: 200, body: s };
  }

  /** GET /v1/refunds: newest first, `payment_intent`, `limit` (default 10), `starting_after`. */
  function listRefunds(url: string): Obj {
    const q = new URL(url, 'http://x').searchParams;
    let all = refunds.filter((r) => !q.get('payment_intent') || r.payment_intent === q.get('payment_intent')).reverse();
    const after = q.get('starting_after');
    if (after) all = all.slice(all.findIndex((r) => r.id === after) + 1);
    const limit = Number(q.get('limit') ?? 10);
    return { object: 'list', url: '/v1/refunds', data: all.slice(0, limit), has_more: all.length > limit };
  }

  const CREATE: Record<string, (p: Obj) => { status: number; body: Obj }> = {
    '/v1/payment_intents': createIntent,
    '/v1/refunds': createRefund,
    '/v1/checkout/sessions': createSession,
  };

  function handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    const path = (req.url ?? '/').split('?')[0];
    const body = parseForm(raw);
    const idem = req.headers['idempotency-key'] as string | undefined;
    calls.push({ method: req.method!, path, ...(idem ? { idempotencyKey: idem } : {}), body });
    const three = /^\/3ds\/(pi_\w+)(\/complete|\/fail)?$/.exec(path);
    if (three) {
      const pi = intents.get(three[1]);
      if (!pi) return send(res, 404, '{}');
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end(`<form method=post action="/3ds/${pi.id}/complete"><button>Complete</button></form>`);
      }
      const back = pi.next_action?.redirect_to_url?.return_url ?? '/';
      if (pi.status === 'requires_action' && three[2] === '/complete')
        Object.assign(pi, { status: 'succeeded', next_action: null, amount_received: pi.amount });
      if (pi.status === 'requires_action' && three[2] === '/fail')
        Object.assign(pi, {
          status: 'requires_payment_method',
          next_action: null,
          last_payment_error: {
            type: 'invalid_request_error',
            code: 'payment_intent_authentication_failure',
            message: 'The provided PaymentMethod has failed authentication.',
          },
        });
      res.writeHead(302, { location: back });
      return res.end();
    }
    if (req.headers.authorization !== `Bearer ${STRIPE_KEY}`)
      return send(res, 401, {
        error: { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_****0000' },
      });
    const got = /^\/v1\/payment_intents\/(pi_\w+)$/.exec(path);
    if (req.method === 'GET' && got) {
      const pi = intents.get(got[1]);
      return pi
        ? send(res, 200, pi)
        : send(res, 404, {
            error: {
              type: 'invalid_request_error',
              code: 'resource_missing',
              message: `No such payment_intent: '${got[1]}'`,
            },
          });
    }
    if (req.method === 'GET' && path === '/v1/refunds') return send(res, 200, listRefunds(req.url ?? ''));
    if (req.method === 'GET' && path === '/v1/balance') return send(res, 200, { object: 'balance', available: [] });
    const create = req.method === 'POST' ? CREATE[path] : undefined;
    if (!create)
      return send(res, 404, {
        error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${path})` },
      });
    const scope = `${path} ${idem}`;
    const known = idem ? keyed.get(scope) : undefined;
    if (known && known.params !== raw)
      return send(res, 400, {
        error: {
          type: 'idempotency_error',
          message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idem}' if you meant to execute a different request.`,
        },
      });
    if (known) return send(res, known.status, known.body, { 'idempotent-replayed': 'true' });
    const out = create(body);
    const text = JSON.stringify(out.body);
    if (idem) keyed.set(scope, { params: raw, status: out.status, body: text });
    if (drop) {
      drop = false;
      return res.socket?.destroy();
    }
    const answer = () => send(res, out.status, text, idem ? { 'idempotency-key': idem } : {});
    if (!latencyMs) return answer();
    held++;
    kept();
    setTimeout(() => {
      held--;
      if (!res.destroyed) answer();
    }, latencyMs);
  }

  const eventOf = (type: string, object: Obj) =>
    JSON.stringify({
      id: id('evt'),
      object: 'event',
      type,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      data: { object: { ...object } },
    });

  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (raw += c));
    req.on('end', () => handle(req, res, raw));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      })
  );
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    intents,
    refunds,
    sessions,
    calls,
    dropNextAnswer: () => {
      drop = true;
    },
    sessionEvent(sessionId, type, patch = {}) {
      return eventOf(type, { ...sessions.get(sessionId), ...patch });
    },
    event: eventOf,
    refundsAs(status) {
      refundStatus = status;
    },
    forgetKeys(path) {
      for (const k of [...keyed.keys()]) if (!path || k.startsWith(`${path} `)) keyed.delete(k);
    },
    held: () => held,
    onKept(fn) {
      kept = fn;
    },
  };
}
