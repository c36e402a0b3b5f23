import t from 'tap';
import { activate, makeApp } from '../../helpers/app.js';
import { until } from '../../helpers/wait.js';
import { smtpSink } from '../../fakes/smtp-sink.js';

// The send path: on the embedded capture vendor (queued, then sent and captured, the rendered
// message readable) and on a priced SMTP server (charged once sent); bad input refused with
// nothing queued, sent or charged; suppression; templates; records per account.

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

async function emailApp(t: any) {
  const sink = await smtpSink(t);
  const { app } = await makeApp(t, {
    plugins: { email: { default_from: 'Gateway <noreply@example.com>' } },
    vendors: [{ id: 'mail', use: 'smtp', config: { url: sink.url, price_usd_per_message: 0.01, pool: false } }],
  });
  const a = await activate(app);
  const post = (url: string, payload: object, headers = a.auth) =>
    app.inject({ method: 'POST', url, payload, headers });
  const get = (url: string, headers = a.auth) => app.inject({ method: 'GET', url, headers });
  const settled = async (id: string) => {
    await until(`email ${id} sent`, async () => (await get(`/v1/email/${id}`)).json().state !== 'queued');
    return (await get(`/v1/email/${id}`)).json();
  };
  const balance = async () => (await get('/v1/account/balance')).json().balance_usd;
  return { app, a, sink, post, get, settled, balance };
}

t.test('capture: queued, then sent and captured; raw is the RFC 5322 message', async (t) => {
  const { app, post, get, settled } = await emailApp(t);
  const res = await post('/v1/email/send', {
    to: ['Ann <ann@example.org>', 'bob@bücher.example'],
    cc: ['carl@example.org'],
    bcc: ['dora@example.org'],
    subject: 'Hello — Grüße',
    html: '<h1>Hi</h1><p>Visit <a href="https://example.org">us</a></p>',
    attachments: [{ filename: 'a.txt', content: b64('attached'), mime: 'text/plain' }],
    vendor: 'capture',
  });
  t.equal(res.statusCode, 200, res.body);
  const rec = res.json();
  t.match(rec, {
    id: /^em_/,
    state: 'queued',
    from: 'Gateway <noreply@example.com>',
    to: ['Ann <ann@example.org>', 'bob@xn--bcher-kva.example'],
    captured: false,
    message_id: /^<em_.+@example\.com>$/,
  });
  const done = await settled(rec.id);
  t.match(done, { state: 'sent', vendor: 'capture', captured: true, vendor_message_id: rec.message_id, cost_usd: 0 });

  const raw = await get(`/v1/email/${rec.id}/raw`);
  t.equal(raw.statusCode, 200, raw.body);
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(raw.json().raw);
  t.equal(parsed.subject, 'Hello — Grüße');
  t.equal(parsed.messageId, rec.message_id);
  t.match(parsed.text, /Visit us \[https:\/\/example.org\/?\]/, 'the text part derived from the HTML');
  t.equal(parsed.attachments[0].content.toString(), 'attached');
  t.notMatch(raw.json().raw, /dora@/, 'bcc is in the envelope only');

  // Another account sees none of it.
  const b = await activate(app);
  t.equal((await get(`/v1/email/${rec.id}`, b.auth)).statusCode, 404);
  t.equal((await get(`/v1/email/${rec.id}/raw`, b.auth)).statusCode, 404);
  t.same((await get('/v1/email', b.auth)).json(), { items: [], next_cursor: null });

  const list = (await get('/v1/email?state=sent')).json();
  t.same(
    list.items.map((i: any) => i.id),
    [rec.id]
  );
  t.same((await get('/v1/email?state=queued')).json().items, []);
});

t.test('bad input: 4xx, nothing queued, sent or charged; a good send is charged once', async (t) => {
  const { post, get, sink, settled, balance } = await emailApp(t);
  const before = await balance();
  const base = { to: 'ann@example.org', subject: 'hi', text: 'x' };
  const many = Array.from({ length: 51 }, (_, i) => `r${i}@example.org`);
  const big = b64(Buffer.alloc(11 * 1024 * 1024));
  const cases: [string, object, number, string][] = [
    ['bad address', { to: 'not-an-address' }, 400, 'validation_failed'],
    ['bad domain', { to: 'a@exa_mple.org' }, 400, 'validation_failed'],
    ['two addresses in one', { to: 'a@example.org, b@example.org' }, 400, 'validation_failed'],
    ['header injection in subject', { subject: 'hi\r\nBcc: victim@example.org' }, 400, 'validation_failed'],
    ['header injection in a name', { to: 'Ann\r\nBcc: x@example.org <ann@example.org>' }, 400, 'validation_failed'],
    ['51 recipients', { to: many.slice(0, 30), cc: many.slice(30, 45), bcc: many.slice(45) }, 413, 'payload_too_large'],
    ['11 MiB attachments', { attachments: [{ filename: 'big.bin', content: big }] }, 413, 'payload_too_large'],
    [
      '11 attachments',
      { attachments: Array.from({ length: 11 }, (_, i) => ({ filename: `${i}.txt`, content: b64('x') })) },
      413,
      'payload_too_large',
    ],
    ['bad base64', { attachments: [{ filename: 'a.txt', content: 'not base64!' }] }, 400, 'validation_failed'],
    [
      'line break in a filename',
      { attachments: [{ filename: 'a\r\n.txt', content: b64('x') }] },
      400,
      'validation_failed',
    ],
    ['no body', { text: undefined }, 400, 'validation_failed'],
    ['unknown field', { headers: { 'X-A': 'b' } }, 400, 'validation_failed'],
    ['unverified from', { from: 'me@unverified.example' }, 403, 'domain_not_verified'],
    ['unknown vendor', { vendor: 'nope' }, 400, 'validation_failed'],
    ['unknown template', { text: undefined, subject: undefined, template_id: 'etpl_nope' }, 404, 'not_found'],
  ];
  for (const [what, over, status, code] of cases) {
    const res = await post('/v1/email/send', { ...base, ...over });
    t.equal(res.statusCode, status, `${what}: ${res.body.slice(0, 300)}`);
    t.equal(res.json().error?.code, code, what);
  }
  t.same((await get('/v1/email')).json().items, [], 'nothing queued');
  t.equal(await balance(), before, 'nothing charged');

  const ok = await post('/v1/email/send', base);
  t.equal(ok.statusCode, 200, ok.body);
  const sent = await settled(ok.json().id);
  t.match(sent, { state: 'sent', vendor: 'mail', vendor_message_id: 'Q1', captured: false, cost_usd: 0.01 });
  t.equal(sink.messages.length, 1, 'only the good one went out');
  t.equal(Math.round((before - (await balance())) * 1e6), 10_000, 'charged 0.01 USD once');
  t.equal((await get(`/v1/email/${sent.id}/raw`)).statusCode, 404, 'not captured: no raw copy');
});

t.test(
  'suppression: add, list, delete; a send to suppressed addresses only is suppressed, not sent or charged',
  async (t) => {
    const { post, get, app, a, sink, settled, balance } = await emailApp(t);
    const add = await post('/v1/email/suppress', { email: 'Ann@Example.org', reason: 'unsubscribe' });
    t.equal(add.statusCode, 200, add.body);
    t.match(add.json(), { email: 'ann@example.org', reason: 'unsubscribe', created_at: /Z$/ });
    await post('/v1/email/suppress', { email: 'bob@example.org' });
    t.equal((await post('/v1/email/suppress', { email: 'nope' })).statusCode, 400);
    const list = (await get('/v1/email/suppress?limit=1')).json();
    t.equal(list.items.length, 1);
    t.type(list.next_cursor, 'string');

    const before = await balance();
    const res = await post('/v1/email/send', {
      to: 'ann@example.org',
      cc: ['BOB@example.org'],
      subject: 's',
      text: 't',
    });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().state, 'suppressed');
    t.same((await get('/v1/email?state=suppressed')).json().items.length, 1);
    const mixed = await post('/v1/email/send', {
      to: ['ann@example.org', 'carl@example.org'],
      subject: 's',
      text: 't',
    });
    t.equal((await settled(mixed.json().id)).state, 'sent');
    t.same(sink.messages[0].to, ['carl@example.org'], 'the suppressed recipient left out');
    t.equal(sink.messages.length, 1);
    t.equal(Math.round((before - (await balance())) * 1e6), 10_000, 'only the sent one charged');

    const other = await activate(app);
    const del = (email: string, headers = a.auth) =>
      app.inject({ method: 'DELETE', url: `/v1/email/suppress/${encodeURIComponent(email)}`, headers });
    t.equal((await del('ann@example.org', other.auth)).statusCode, 404, "another account's list is its own");
    t.equal((await del('ann@example.org')).statusCode, 200);
    t.equal((await del('ann@example.org')).statusCode, 404);
  }
);

t.test('templates: CRUD; variables HTML-escaped in the HTML part; text derived', async (t) => {
  const { post, get, app, a, settled } = await emailApp(t);
  const res = await post('/v1/email/templates', {
    name: 'welcome',
    subject: 'Welcome, {{name}}',
    html: '<p>Hello {{name}}</p>',
  });
  t.equal(res.statusCode, 200, res.body);
  const tpl = res.json();
  t.match(tpl, { template_id: /^etpl_/, name: 'welcome', text: null });
  t.equal((await post('/v1/email/templates', { name: 'x', subject: 's' })).statusCode, 400, 'html or text needed');
  const put = await app.inject({
    method: 'PUT',
    url: `/v1/email/templates/${tpl.template_id}`,
    payload: { name: 'welcome2', subject: 'Welcome, {{name}}', html: '<p>Hi {{name}}</p>' },
    headers: a.auth,
  });
  t.equal(put.json().name, 'welcome2');
  t.equal((await get('/v1/email/templates')).json().items.length, 1);

  const send = await post('/v1/email/send', {
    to: 'ann@example.org',
    template_id: tpl.template_id,
    template_vars: { name: '<b>Ann & co</b>' },
    vendor: 'capture',
  });
  t.equal(send.statusCode, 200, send.body);
  t.equal(send.json().subject, 'Welcome, <b>Ann & co</b>', 'the subject is not HTML: not escaped');
  await settled(send.json().id);
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser((await get(`/v1/email/${send.json().id}/raw`)).json().raw);
  t.match(parsed.html, /<p>Hi &lt;b&gt;Ann &amp; co&lt;&#x2F;b&gt;<\/p>/, 'variables escaped in the HTML');
  t.equal(parsed.text?.trim(), 'Hi <b>Ann & co</b>');

  const other = await activate(app);
  t.equal((await get(`/v1/email/templates/${tpl.template_id}`, other.auth)).statusCode, 404);
  const theirs = await post('/v1/email/send', { to: 'a@example.org', template_id: tpl.template_id }, other.auth);
  t.equal(theirs.statusCode, 404);
  const del = await app.inject({ method: 'DELETE', url: `/v1/email/templates/${tpl.template_id}`, headers: a.auth });
  t.same(del.json(), { ok: true });
});
