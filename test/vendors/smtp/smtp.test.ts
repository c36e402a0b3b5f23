// database-independent: the adapter alone, against a real SMTP server and a local DNS server
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import smtp from '../../../vendors/smtp/index.js';
import { classifySmtp } from '../../../vendors/smtp/classify.js';
import { dkimValue } from '../../../plugins/email/domains.js';
import { dnsServer } from '../../helpers/dns-server.js';
import { smtpSink } from '../../fakes/smtp-sink.js';
import { adapter, message, opts } from './smtp-adapter.js';

t.test('a real SMTP session through the egress proxy, DKIM-signed, checked by mailauth against DNS', async (t) => {
  const sink = await smtpSink(t, { user: 'u', pass: 'p w' });
  const dns = await dnsServer(t);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 1024,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  dns.txt.set('sel1._domainkey.mail.example', [dkimValue(publicKey)]);
  const inst = await adapter(t, { url: sink.url.replace('p w', 'p%20w') });
  const send = inst.capabilities['email.send']!;
  const out = await send.invoke(
    message({ dkim: { domain: 'mail.example', selector: 'sel1', private_key: privateKey } }),
    opts()
  );
  t.same(out, {
    vendor_message_id: 'Q1',
    accepted: ['ann@example.org', 'carl@example.org', 'dora@example.org'],
    rejected: [],
  });
  t.equal(sink.messages.length, 1);
  const got = sink.messages[0];
  t.same(got.to, ['ann@example.org', 'carl@example.org', 'dora@example.org'], 'bcc in the envelope');
  t.equal(got.from, 'news@mail.example');
  t.notMatch(got.raw, /^Bcc:/im, 'but not in the headers');
  t.equal(sink.connections[0], '127.0.0.1', 'the connection came through the local egress proxy');

  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(got.raw);
  t.equal(parsed.subject, 'Grüße');
  t.equal(parsed.messageId, '<em_1@mail.example>');
  t.equal(parsed.text?.trim(), 'plain');
  t.equal(parsed.attachments[0].filename, 'a.txt');

  const { dkimVerify } = await import('mailauth/lib/dkim/verify.js');
  const r = dns.resolver();
  const verdict = await dkimVerify(Buffer.from(got.raw), {
    resolver: (name: string, type: string) => r.resolve(name, type),
  });
  t.equal(verdict.results[0].status.result, 'pass', JSON.stringify(verdict.results[0].status));
  t.equal(verdict.results[0].signingDomain, 'mail.example');
  t.ok(dns.asked.includes('sel1._domainkey.mail.example TXT'), 'the key was looked up in DNS');

  // A changed key in DNS: the same message no longer verifies.
  const other = generateKeyPairSync('rsa', { modulusLength: 1024, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  dns.txt.set('sel1._domainkey.mail.example', [dkimValue(other.publicKey as unknown as string)]);
  const bad = await dkimVerify(Buffer.from(got.raw), {
    resolver: (name: string, type: string) => r.resolve(name, type),
  });
  t.equal(bad.results[0].status.result, 'fail');
});

t.test('failures classified by whether the content left: nothing sent is not_sent, after DATA never', async (t) => {
  const sink = await smtpSink(t);
  const send = (await adapter(t, { url: sink.url, pool: false })).capabilities['email.send']!;
  const kind = async (p: Promise<unknown>) => {
    try {
      await p;
      return 'ok';
    } catch (e) {
      return classifySmtp(e);
    }
  };
  sink.reject.rcpt = 450;
  t.equal(await kind(send.invoke(message({ cc: [], bcc: [] }), opts())), 'not_sent', 'RCPT 450: try again');
  sink.reject.rcpt = 550;
  t.equal(await kind(send.invoke(message({ cc: [], bcc: [] }), opts())), 'client_error', 'RCPT 550: no server will');
  sink.reject.data = 451;
  t.equal(await kind(send.invoke(message(), opts())), 'unavailable', 'after the content: may have been queued');
  sink.reject.data = 554;
  t.equal(await kind(send.invoke(message(), opts())), 'client_error');
  t.equal(sink.messages.length, 0);

  // Wrong password: auth. A refused target (the egress rules): the proxy says no, nothing sent.
  const authSink = await smtpSink(t, { user: 'u', pass: 'right' });
  const wrong = (await adapter(t, { url: authSink.url.replace('right', 'wrong'), pool: false })).capabilities[
    'email.send'
  ]!;
  t.equal(await kind(wrong.invoke(message(), opts())), 'auth');
  const fenced = (await adapter(t, { url: sink.url, pool: false }, false)).capabilities['email.send']!;
  t.equal(await kind(fenced.invoke(message(), opts())), 'not_sent', 'egress refuses loopback: not_sent');
  t.equal(sink.messages.length, 0);
  t.equal(await kind(send.invoke(message(), opts())), 'ok');
  t.equal(sink.messages.length, 1);
});

t.test("the instance's own key signs a message that comes without one; the area's key wins", async (t) => {
  const sink = await smtpSink(t);
  const key = () =>
    generateKeyPairSync('rsa', {
      modulusLength: 1024,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    }).privateKey;
  const own = { domain: 'relay.example', selector: 'r1', private_key: key() };
  const send = (await adapter(t, { url: sink.url, dkim: own })).capabilities['email.send']!;
  await send.invoke(message(), opts());
  t.match(sink.messages[0].raw, /^DKIM-Signature: [\s\S]*?d=relay\.example;[\s\S]*?s=r1;/m);
  await send.invoke(message({ dkim: { domain: 'mail.example', selector: 'm1', private_key: key() } }), opts());
  t.match(sink.messages[1].raw, /^DKIM-Signature: [\s\S]*?d=mail\.example;[\s\S]*?s=m1;/m);
  t.notMatch(sink.messages[1].raw, /d=relay\.example/);
});

t.test('config: only smtp:// and smtps:// URLs; secrets marked', async (t) => {
  t.notOk(Value.Check(smtp.configSchema, { url: 'http://x' }));
  t.ok(Value.Check(smtp.configSchema, Value.Default(smtp.configSchema, { url: 'smtps://u:p@mail.example:465' })));
  t.equal((smtp.configSchema as any).properties.url['x-secret'], true);
});
