import t from 'tap';
import { SvcClient } from '../../client/index.js';
import { clientApp, collect, rejects, settled, walked } from './client-app.js';

// client.sms against a listening gateway on the embedded sms-capture sink: sends and their kept
// copies, pages, a passcode sent and checked, errors as SvcError.

t.test('send, get, captured, list and iterate; an idempotency key sends once', async (t) => {
  const { c } = await clientApp(t);
  const first = await c.sms.send({ to: '+14155550100', body: 'Hello €uro', from: 'Acme' }, { idempotencyKey: 'sms-1' });
  t.match(first, { sms_id: /^sms_/, to: '+14155550100', from: 'Acme', state: 'queued', segments: 1 });
  t.equal(
    (await c.sms.send({ to: '+14155550100', body: 'Hello €uro', from: 'Acme' }, { idempotencyKey: 'sms-1' })).sms_id,
    first.sms_id,
    'the retry answers the same record'
  );
  await rejects(
    t,
    c.sms.send({ to: '+14155550100', body: 'Another text' }, { idempotencyKey: 'sms-1' }),
    { code: 'idempotency_key_reused', status: 409 },
    'the same key with another body'
  );
  const sent = await settled('the text', () => c.sms.get(first.sms_id));
  t.match(sent, { state: 'sent', vendor: 'sms-capture', captured: true, cost_usd: 0, error: null });
  t.match(await c.sms.captured(first.sms_id), {
    sms_id: first.sms_id,
    to: '+14155550100',
    from: 'Acme',
    body: 'Hello €uro',
    segments: 1,
  });

  const ids = [first.sms_id];
  for (const n of [1, 2, 3]) ids.push((await c.sms.send({ to: `+1415555010${n}`, body: `n${n}` })).sms_id);
  const page = await c.sms.list({ limit: 2 });
  t.equal(page.items.length, 2);
  const rest = await c.sms.list({ limit: 2, cursor: page.next_cursor! });
  t.equal(rest.next_cursor, null);
  walked(t, [...page.items, ...rest.items], (m) => m.sms_id, ids, 'two pages');
  walked(t, await collect(c.sms.iterate({ limit: 3 })), (m) => m.sms_id, ids, 'iterate');
  t.same(await c.sms.list({ state: 'failed' }), { items: [], next_cursor: null }, 'the state filter is sent');
});

t.test('4xx answers are SvcErrors with the code, status and param', async (t) => {
  const { c, url } = await clientApp(t);
  await rejects(
    t,
    c.sms.send({ to: '4155550100', body: 'x' }),
    { code: 'validation_failed', status: 400, param: 'to' },
    'not E.164'
  );
  await rejects(
    t,
    c.sms.send({ to: '+14155550100' }),
    { code: 'validation_failed', status: 400, param: 'body' },
    'no body'
  );
  await rejects(t, c.sms.get('sms_doesnotexist'), { code: 'not_found', status: 404 }, 'an unknown id');
  await rejects(t, c.sms.list({ limit: 0 }), { code: 'validation_failed', status: 400 }, 'limit below 1');
  const mine = await c.sms.send({ to: '+14155550100', body: 'mine' });
  const other = new SvcClient({ baseUrl: url });
  await other.activate();
  await rejects(t, other.sms.get(mine.sms_id), { code: 'not_found', status: 404 }, "another account's record");
  await rejects(t, other.sms.captured(mine.sms_id), { code: 'not_found', status: 404 }, "another account's copy");
});

t.test('a passcode: sent as a text, right once, then rate limited with retry-after', async (t) => {
  const { c } = await clientApp(t);
  const to = '+14155550109';
  const r = await c.sms.otp({ to }, { idempotencyKey: 'otp-1' });
  t.match(r, { request_id: /^otp_/, sms_id: /^sms_/, expires_at: /Z$/ });
  t.same(await c.sms.otp({ to }, { idempotencyKey: 'otp-1' }), r, 'the retry answers the same passcode');
  await settled('the passcode text', () => c.sms.get(r.sms_id));
  const code = /\b(\d{6})\b/.exec((await c.sms.captured(r.sms_id)).body)![1];
  const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
  t.same(await c.sms.verify({ to, code: wrong }), { valid: false });
  t.same(await c.sms.verify({ to, code }), { valid: true });
  t.same(await c.sms.verify({ to, code }), { valid: false }, 'a right code works once');

  const limited = await rejects(t, c.sms.otp({ to }), { code: 'rate_limited', status: 429 }, 'one send per 30 s');
  t.ok(limited.retryAfter !== undefined && limited.retryAfter > 0, 'retry-after reaches the error');
  await rejects(
    t,
    c.sms.verify({ to, code: '12345' }),
    { code: 'validation_failed', status: 400, param: 'code' },
    'five digits'
  );
});
