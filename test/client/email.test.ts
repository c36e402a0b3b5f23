import t from 'tap';
import { SvcClient } from '../../client/index.js';
import { dnsServer } from '../helpers/dns-server.js';
import { clientApp, collect, rejects, settled, walked } from './client-app.js';

// client.email against a listening gateway whose only mail vendor is the embedded capture vendor:
// sends, records and their raw copies, pages, errors as SvcError; domains (a local DNS server),
// the suppression list and templates.

t.test('send, get, raw, list and iterate; an idempotency key sends once', async (t) => {
  const { c } = await clientApp(t);
  const first = await c.email.send(
    { to: 'Ann <ann@example.org>', subject: 'Hello', text: 'Hi Ann' },
    { idempotencyKey: 'mail-1' }
  );
  t.match(first, { id: /^em_/, state: 'queued', to: ['Ann <ann@example.org>'], captured: false, error: null });
  const again = await c.email.send(
    { to: 'Ann <ann@example.org>', subject: 'Hello', text: 'Hi Ann' },
    { idempotencyKey: 'mail-1' }
  );
  t.equal(again.id, first.id, 'the retry answers the same record');
  await rejects(
    t,
    c.email.send({ to: 'bob@example.org', subject: 'Other', text: 'x' }, { idempotencyKey: 'mail-1' }),
    { code: 'idempotency_key_reused', status: 409 },
    'the same key with another body'
  );

  const sent = await settled('the email', () => c.email.get(first.id));
  t.match(sent, { id: first.id, state: 'sent', vendor: 'capture', captured: true, cost_usd: 0 });
  const raw = await c.email.raw(first.id);
  t.equal(raw.id, first.id);
  t.match(raw.raw, /^Subject: Hello\r$/m);
  t.match(raw.raw, new RegExp(`^Message-ID: ${sent.message_id}\r$`, 'm'));

  const ids = [first.id];
  for (const n of [2, 3, 4]) ids.push((await c.email.send({ to: `r${n}@example.org`, subject: `${n}`, text: 'x' })).id);
  const page = await c.email.list({ limit: 3 });
  t.equal(page.items.length, 3);
  t.type(page.next_cursor, 'string');
  const rest = await c.email.list({ limit: 3, cursor: page.next_cursor! });
  t.equal(rest.next_cursor, null);
  walked(t, [...page.items, ...rest.items], (m) => m.id, ids, 'two pages');
  walked(t, await collect(c.email.iterate({ limit: 1 })), (m) => m.id, ids, 'iterate');
  t.same(await c.email.list({ state: 'failed' }), { items: [], next_cursor: null }, 'the state filter is sent');
});

t.test('4xx answers are SvcErrors with the code, status and param', async (t) => {
  const { c, url } = await clientApp(t);
  await rejects(
    t,
    c.email.send({ to: 'not-an-address', subject: 's', text: 't' }),
    { code: 'validation_failed', status: 400, param: 'to' },
    'a bad address'
  );
  await rejects(
    t,
    c.email.send({ to: 'ann@example.org', from: 'me@unverified.example', subject: 's', text: 't' }),
    { code: 'domain_not_verified', status: 403, param: 'from' },
    'from on a domain the account has not verified'
  );
  await rejects(t, c.email.get('em_doesnotexist'), { code: 'not_found', status: 404 }, 'an unknown id');
  await rejects(t, c.email.raw('em_doesnotexist'), { code: 'not_found', status: 404 }, 'no raw copy');
  await rejects(t, c.email.list({ limit: 500 }), { code: 'validation_failed', status: 400 }, 'limit past 200');
  const mine = await c.email.send({ to: 'ann@example.org', subject: 's', text: 't' });
  const other = new SvcClient({ baseUrl: url });
  await other.activate();
  await rejects(t, other.email.get(mine.id), { code: 'not_found', status: 404 }, "another account's record");
  t.same(await other.email.list(), { items: [], next_cursor: null });
  const readOnly = new SvcClient({
    baseUrl: url,
    apiKey: (await c.createKey({ label: 'ro', scopes: ['email:read'] })).secret,
  });
  t.equal((await readOnly.email.get(mine.id)).id, mine.id, 'email:read reads');
  await rejects(
    t,
    readOnly.email.send({ to: 'ann@example.org', subject: 's', text: 't' }),
    { code: 'forbidden', status: 403 },
    'email:read does not send'
  );
});

t.test('domains: verify against DNS, list, delete; a verified domain signs what it sends', async (t) => {
  const dns = await dnsServer(t);
  const { c } = await clientApp(t, { plugins: { email: { dns_servers: [dns.address], dkim_key_bits: 1024 } } });
  const d = await c.email.domains.verify('Mail.Example.com');
  t.match(d, { domain_id: /^dom_/, domain: 'mail.example.com', verified: false, missing: ['dkim', 'spf', 'dmarc'] });
  for (const r of d.records) dns.txt.set(r.name.toLowerCase(), [r.value]);
  t.match(await c.email.domains.verify('mail.example.com'), { verified: true, missing: [] });
  t.match((await c.email.domains.list()).items, [{ domain: 'mail.example.com', verified: true }]);

  const m = await c.email.send({ from: 'news@mail.example.com', to: 'ann@example.org', subject: 's', text: 't' });
  await settled('the signed email', () => c.email.get(m.id));
  t.match((await c.email.raw(m.id)).raw, /^DKIM-Signature: v=1; a=rsa-sha256;[\s\S]*?d=mail\.example\.com;/m);

  t.same(await c.email.domains.delete('mail.example.com'), { ok: true });
  t.same((await c.email.domains.list()).items, []);
  await rejects(t, c.email.domains.delete('mail.example.com'), { code: 'not_found', status: 404 }, 'gone');
  await rejects(t, c.email.domains.verify('not a domain'), { code: 'validation_failed', status: 400 }, 'bad name');
});

t.test('suppressions: add, page, iterate, delete; a send to a suppressed address is not sent', async (t) => {
  const { c } = await clientApp(t);
  t.match(await c.email.suppressions.add({ email: 'Ann@Example.org', reason: 'unsubscribe' }), {
    email: 'ann@example.org',
    reason: 'unsubscribe',
  });
  await c.email.suppressions.add({ email: 'bob@example.org' });
  await c.email.suppressions.add({ email: 'carl+tag@example.org' });
  const page = await c.email.suppressions.list({ limit: 2 });
  t.equal(page.items.length, 2);
  t.type(page.next_cursor, 'string');
  t.same(
    (await collect(c.email.suppressions.iterate({ limit: 2 }))).map((s) => s.email).sort(),
    ['ann@example.org', 'bob@example.org', 'carl+tag@example.org'],
    'every address once, across pages'
  );
  t.equal((await c.email.send({ to: 'ann@example.org', subject: 's', text: 't' })).state, 'suppressed');

  t.same(await c.email.suppressions.delete('carl+tag@example.org'), { ok: true }, 'a + in the path is kept');
  await rejects(
    t,
    c.email.suppressions.delete('carl+tag@example.org'),
    { code: 'not_found', status: 404 },
    'deleted once'
  );
  await rejects(t, c.email.suppressions.add({ email: 'nope' }), { code: 'validation_failed', status: 400 }, 'bad');
});

t.test('templates: create, get, page, update, delete; a send fills one', async (t) => {
  const { c } = await clientApp(t);
  const made = [];
  for (const name of ['one', 'two', 'three'])
    made.push(await c.email.templates.create({ name, subject: `${name}: {{who}}`, text: 'Hello {{who}}' }));
  t.match(made[0], { template_id: /^etpl_/, name: 'one', html: null, text: 'Hello {{who}}' });
  t.same(await c.email.templates.get(made[0].template_id), made[0]);
  const page = await c.email.templates.list({ limit: 2 });
  t.equal(page.items.length, 2);
  t.type(page.next_cursor, 'string');
  const ids = made.map((x) => x.template_id);
  walked(t, await collect(c.email.templates.iterate({ limit: 2 })), (x) => x.template_id, ids, 'templates');

  const updated = await c.email.templates.update(made[0].template_id, {
    name: 'one',
    subject: 'Hi {{who}}',
    text: 'Dear {{who}}',
  });
  t.match(updated, { template_id: made[0].template_id, subject: 'Hi {{who}}', text: 'Dear {{who}}' });
  const m = await c.email.send({
    to: 'ann@example.org',
    template_id: made[0].template_id,
    template_vars: { who: 'Ann' },
  });
  t.equal(m.subject, 'Hi Ann');
  await settled('the templated email', () => c.email.get(m.id));
  t.match((await c.email.raw(m.id)).raw, /Dear Ann/);

  t.same(await c.email.templates.delete(made[0].template_id), { ok: true });
  await rejects(t, c.email.templates.get(made[0].template_id), { code: 'not_found', status: 404 }, 'deleted');
  await rejects(
    t,
    c.email.templates.update(made[0].template_id, { name: 'x', subject: 's', text: 't' }),
    { code: 'not_found', status: 404 },
    'no update of a deleted template'
  );
  await rejects(
    t,
    c.email.templates.create({ name: '', subject: 's', text: 't' }),
    { code: 'validation_failed', status: 400, param: 'name' },
    'an empty name'
  );
});
