import t from 'tap';
import { SvcClient } from '../../client/index.js';
import { dnsServer } from '../helpers/dns-server.js';
import { clientApp, collect, rejects, walked } from './client-app.js';

// client.publicUrl against a listening gateway: records, an anonymous one claimed, domains.

t.test('create, get, list, iterate, anonymous and claim, domains', async (t) => {
  const dns = await dnsServer(t);
  const { c, url } = await clientApp(t, { plugins: { 'public-url': { dns_servers: [dns.address] } } });
  const r = await c.publicUrl.create({ subdomain: 'client-app', port: 3000 }, { idempotencyKey: 'pu-1' });
  t.match(r, { url_id: /^url_/, subdomain: 'client-app', state: 'waiting', anonymous: false });
  t.equal(
    (await c.publicUrl.create({ subdomain: 'client-app', port: 3000 }, { idempotencyKey: 'pu-1' })).url_id,
    r.url_id
  );
  t.same(await c.publicUrl.get(r.url_id), r);

  const stranger = new SvcClient({ baseUrl: url });
  const anon = await stranger.publicUrl.anonymous({ port: 8080 });
  t.match(anon, { anonymous: true, token: /^tun_/ });
  const claimed = await c.publicUrl.claim(anon.url_id);
  t.equal(claimed.anonymous, false);
  await rejects(t, c.publicUrl.claim(anon.url_id), { code: 'invalid_state', status: 409 }, 'claimed twice');

  const page = await c.publicUrl.list({ limit: 1 });
  t.equal(page.items.length, 1);
  walked(t, await collect(c.publicUrl.iterate()), (x) => x.url_id, [r.url_id, anon.url_id], 'iterate');

  const d = await c.publicUrl.createDomain({ domain: 'shop.example.com', url_id: r.url_id });
  t.equal(d.state, 'pending');
  dns.txt.set(d.records[0].name, [d.records[0].value]);
  t.equal((await c.publicUrl.verifyDomain(d.domain_id)).state, 'verified');
  t.equal((await c.publicUrl.getDomain(d.domain_id)).state, 'verified');
  t.equal((await c.publicUrl.listDomains()).items.length, 1);
});
