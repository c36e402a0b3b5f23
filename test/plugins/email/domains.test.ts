import t from 'tap';
import { activate, makeApp } from '../../helpers/app.js';
import { until } from '../../helpers/wait.js';
import { dnsServer } from '../../helpers/dns-server.js';
import { smtpSink } from '../../fakes/smtp-sink.js';

// Domains: created with a DKIM key on the first verify, verified only when a real DNS lookup
// (a local DNS server) finds the records; then a send from the domain goes out over SMTP signed
// with its key, which mailauth verifies against the same DNS.

t.test('verify, list, delete; a verified domain sends DKIM-signed mail over SMTP', async (t) => {
  const dns = await dnsServer(t);
  const sink = await smtpSink(t);
  const { app } = await makeApp(t, {
    plugins: { email: { dns_servers: [dns.address], dkim_key_bits: 1024, spf_include: 'include:_spf.relay.test' } },
    vendors: [{ id: 'mail', use: 'smtp', config: { url: sink.url } }],
  });
  const a = await activate(app);
  const post = (url: string, payload: object, headers = a.auth) =>
    app.inject({ method: 'POST', url, payload, headers });
  const get = (url: string, headers = a.auth) => app.inject({ method: 'GET', url, headers });

  const first = await post('/v1/email/domains/verify', { domain: 'Mail.Example.COM' });
  t.equal(first.statusCode, 200, first.body);
  const d = first.json();
  t.match(d, { domain_id: /^dom_/, domain: 'mail.example.com', verified: false, selector: /^svc[a-z0-9]{8}$/ });
  t.same(d.missing, ['dkim', 'spf', 'dmarc']);
  const [dkim, spf, dmarc] = d.records;
  t.match(dkim, {
    type: 'TXT',
    name: `${d.selector}._domainkey.mail.example.com`,
    value: /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]+$/,
  });
  t.same(spf, { type: 'TXT', name: 'mail.example.com', value: 'v=spf1 include:_spf.relay.test ~all' });
  t.same(dmarc, { type: 'TXT', name: '_dmarc.mail.example.com', value: 'v=DMARC1; p=none' });
  t.ok(dns.asked.includes(`${d.selector}._domainkey.mail.example.com TXT`), 'asked the configured DNS server');

  // Not verified yet: from on it is refused.
  const early = await post('/v1/email/send', {
    from: 'news@mail.example.com',
    to: 'ann@example.org',
    subject: 's',
    text: 't',
  });
  t.equal(early.statusCode, 403);
  t.equal(early.json().error.code, 'domain_not_verified');

  // Part of the records: still not verified; the same key on the second call.
  dns.txt.set('mail.example.com', [spf.value]);
  dns.txt.set(dkim.name.toLowerCase(), [dkim.value]);
  const partial = (await post('/v1/email/domains/verify', { domain: 'mail.example.com' })).json();
  t.equal(partial.verified, false);
  t.same(partial.missing, ['dmarc']);
  t.equal(partial.records[0].value, dkim.value, 'the key is made once');
  dns.txt.set('_dmarc.mail.example.com', [dmarc.value]);
  const done = (await post('/v1/email/domains/verify', { domain: 'mail.example.com' })).json();
  t.equal(done.verified, true);
  t.same(done.missing, []);
  t.match((await get('/v1/email/domains')).json().items, [{ domain: 'mail.example.com', verified: true }]);

  const b = await activate(app);
  t.same((await get('/v1/email/domains', b.auth)).json().items, [], "another account's domains are its own");
  const theirs = await post(
    '/v1/email/send',
    { from: 'x@mail.example.com', to: 'a@example.org', subject: 's', text: 't' },
    b.auth
  );
  t.equal(theirs.json().error?.code, 'domain_not_verified', 'and verifying is per account');

  const res = await post('/v1/email/send', {
    from: 'News <news@mail.example.com>',
    to: 'ann@example.org',
    subject: 'Signed',
    text: 'hello',
  });
  t.equal(res.statusCode, 200, res.body);
  const id = res.json().id;
  await until('the send', async () => (await get(`/v1/email/${id}`)).json().state !== 'queued');
  t.match((await get(`/v1/email/${id}`)).json(), { state: 'sent', vendor: 'mail', captured: false });
  const raw = sink.messages[0].raw;
  t.match(
    raw,
    new RegExp(`DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=mail.example.com;[\\s\\S]*s=${d.selector}`)
  );
  const { dkimVerify } = await import('mailauth/lib/dkim/verify.js');
  const r = dns.resolver();
  const verdict = await dkimVerify(Buffer.from(raw), { resolver: (n: string, type: string) => r.resolve(n, type) });
  t.equal(verdict.results[0].status.result, 'pass', JSON.stringify(verdict.results[0].status));

  // The records gone from DNS: the next verify says so, and from on the domain is refused again.
  dns.txt.delete('_dmarc.mail.example.com');
  t.equal((await post('/v1/email/domains/verify', { domain: 'mail.example.com' })).json().verified, false);
  const after = await post('/v1/email/send', {
    from: 'news@mail.example.com',
    to: 'ann@example.org',
    subject: 's',
    text: 't',
  });
  t.equal(after.statusCode, 403);

  t.equal((await post('/v1/email/domains/verify', { domain: 'not a domain' })).statusCode, 400);
  const del = (domain: string, headers = a.auth) =>
    app.inject({ method: 'DELETE', url: `/v1/email/domains/${domain}`, headers });
  t.equal((await del('mail.example.com', b.auth)).statusCode, 404);
  t.equal((await del('mail.example.com')).statusCode, 200);
  t.same((await get('/v1/email/domains')).json().items, []);
  // Made again after a delete: a new key.
  const again = (await post('/v1/email/domains/verify', { domain: 'mail.example.com' })).json();
  t.not(again.records[0].value, dkim.value);
});
