import t from 'tap';
import { activate, makeApp } from '../../helpers/app.js';
import { dnsServer } from '../../helpers/dns-server.js';

// The records of public URLs (no socket here: the tunnel tests connect): create, renew by
// subdomain, names another account holds, ttl bounds, anonymous records and their claim, and
// custom domains verified through a real DNS lookup of a local server.

t.test('create, get, list, subdomains, ttl, idempotency', async (t) => {
  const { app } = await makeApp(t, { server: { public_url: 'http://127.0.0.1:8787' } });
  const a = await activate(app);
  const b = await activate(app);
  const post = (url: string, payload: object, headers: object = a.auth) =>
    app.inject({ method: 'POST', url, payload, headers: headers as Record<string, string> });
  const get = (url: string, headers = a.auth) => app.inject({ method: 'GET', url, headers });

  const made = await post('/v1/public-url', { subdomain: 'my-app', port: 3000 });
  t.equal(made.statusCode, 200, made.body);
  const r = made.json();
  t.match(r, {
    url_id: /^url_/,
    url: 'http://my-app.localhost:8787',
    subdomain: 'my-app',
    state: 'waiting',
    port: 3000,
    anonymous: false,
    connect_url: `ws://127.0.0.1:8787/v1/public-url/tunnel/${r.url_id}`,
  });
  const ttl = Date.parse(r.expires_at) - Date.parse(r.created_at);
  t.equal(ttl, 8 * 3600 * 1000, 'default ttl 8 h');
  t.same((await get(`/v1/public-url/${r.url_id}`)).json(), r);

  // Asked again by its holder: the same record, renewed; by another account: taken.
  const again = (await post('/v1/public-url', { subdomain: 'my-app', ttl_seconds: 600 })).json();
  t.equal(again.url_id, r.url_id);
  t.equal(Date.parse(again.expires_at) - Date.now() <= 600_000, true);
  const taken = await post('/v1/public-url', { subdomain: 'my-app' }, b.auth);
  t.equal(taken.statusCode, 409);
  t.equal(taken.json().error.code, 'already_exists');
  t.equal((await get(`/v1/public-url/${r.url_id}`, b.auth)).statusCode, 404, "another account's is 404");
  const reserved = await post('/v1/public-url', { subdomain: 'api' });
  t.equal(reserved.statusCode, 409);

  for (const bad of [
    { subdomain: 'Bad_Name' },
    { subdomain: 'a.b' },
    { ttl_seconds: 59 },
    { ttl_seconds: 604801 },
    { port: 0 },
    { extra: 1 },
  ]) {
    const res = await post('/v1/public-url', bad);
    t.equal(res.statusCode, 400, JSON.stringify(bad));
  }

  const random = (await post('/v1/public-url', {})).json();
  t.match(random.subdomain, /^[a-z0-9]{10}$/);
  const list = (await get('/v1/public-url?limit=1')).json();
  t.equal(list.items[0].url_id, random.url_id, 'newest first');
  t.ok(list.next_cursor);
  const rest = (await get(`/v1/public-url?limit=5&cursor=${list.next_cursor}`)).json();
  t.same(
    rest.items.map((i: { url_id: string }) => i.url_id),
    [r.url_id]
  );
  t.same((await get('/v1/public-url', b.auth)).json().items, []);

  const idem = { subdomain: 'idem-one', idempotency_key: 'k1' };
  const i1 = await post('/v1/public-url', idem);
  const i2 = await post('/v1/public-url', idem);
  t.equal(i2.headers['idempotent-replayed'], 'true');
  t.equal(i2.json().url_id, i1.json().url_id);
  t.equal((await post('/v1/public-url', { ...idem, port: 1 })).json().error.code, 'idempotency_key_reused');
});

t.test('anonymous public URLs and their claim', async (t) => {
  const { app } = await makeApp(t, { plugins: { 'public-url': { anonymous: { per_ip_per_hour: 2 } } } });
  const a = await activate(app);
  const b = await activate(app);
  const anon = await app.inject({ method: 'POST', url: '/v1/public-url/anonymous', payload: { port: 8080 } });
  t.equal(anon.statusCode, 200, anon.body);
  const r = anon.json();
  t.match(r, { anonymous: true, state: 'waiting', token: /^tun_[A-Za-z0-9]{40}$/, port: 8080 });
  t.ok(Date.parse(r.expires_at) - Date.now() <= 7200_000, 'anonymous ttl capped at 2 h by default');
  const long = await app.inject({ method: 'POST', url: '/v1/public-url/anonymous', payload: { ttl_seconds: 86400 } });
  t.equal(long.statusCode, 400);
  t.equal((await app.inject({ method: 'POST', url: '/v1/public-url/anonymous', payload: {} })).statusCode, 200);
  const third = await app.inject({ method: 'POST', url: '/v1/public-url/anonymous', payload: {} });
  t.equal(third.statusCode, 429, 'per address and hour');

  t.equal((await app.inject({ method: 'GET', url: `/v1/public-url/${r.url_id}`, headers: a.auth })).statusCode, 404);
  const claim = (headers: object) =>
    app.inject({ method: 'POST', url: `/v1/public-url/${r.url_id}/claim`, headers: headers as Record<string, string> });
  t.equal((await claim({})).statusCode, 401);
  const claimed = await claim(a.auth);
  t.equal(claimed.statusCode, 200, claimed.body);
  t.match(claimed.json(), { url_id: r.url_id, anonymous: false, subdomain: r.subdomain });
  t.notOk('token' in claimed.json(), 'the token is shown once');
  t.equal((await claim(a.auth)).json().error.code, 'invalid_state');
  t.equal((await claim(b.auth)).statusCode, 404, 'claimed by another: not revealed');
  t.equal((await app.inject({ method: 'GET', url: `/v1/public-url/${r.url_id}`, headers: a.auth })).statusCode, 200);
  const unknown = await app.inject({ method: 'POST', url: '/v1/public-url/url_nope/claim', headers: b.auth });
  t.equal(unknown.statusCode, 404);
});

t.test('custom domains are verified by a TXT record found through DNS', async (t) => {
  const dns = await dnsServer(t);
  const { app } = await makeApp(t, { plugins: { 'public-url': { dns_servers: [dns.address] } } });
  const a = await activate(app);
  const b = await activate(app);
  const post = (url: string, payload: object | undefined, headers = a.auth) =>
    app.inject({ method: 'POST', url, payload, headers });
  const url = (await post('/v1/public-url', { subdomain: 'shop' })).json();
  const made = await post('/v1/public-url/domains', { domain: 'App.Example.COM', url_id: url.url_id });
  t.equal(made.statusCode, 200, made.body);
  const d = made.json();
  t.match(d, { domain_id: /^dom_/, domain: 'app.example.com', url_id: url.url_id, state: 'pending' });
  const [txt, cname] = d.records;
  t.match(txt, { type: 'TXT', name: '_svc-challenge.app.example.com', value: /^svc-verify=[A-Za-z0-9]{32}$/ });
  t.same(cname, { type: 'CNAME', name: 'app.example.com', value: 'shop.localhost' });

  t.equal((await post('/v1/public-url/domains', { domain: 'app.example.com' })).statusCode, 409);
  t.equal((await post('/v1/public-url/domains', { domain: 'not a domain' })).statusCode, 400);
  t.equal((await post('/v1/public-url/domains', { domain: 'x.localhost' })).statusCode, 400);
  const foreign = await post('/v1/public-url/domains', { domain: 'b.example.com', url_id: url.url_id }, b.auth);
  t.equal(foreign.statusCode, 404, "another account's tunnel");

  const early = (await post(`/v1/public-url/domains/${d.domain_id}/verify`, undefined)).json();
  t.equal(early.state, 'failed');
  t.ok(dns.asked.includes('_svc-challenge.app.example.com TXT'), 'asked the configured server');
  dns.txt.set('_svc-challenge.app.example.com', ['unrelated', txt.value]);
  const ok = (await post(`/v1/public-url/domains/${d.domain_id}/verify`, undefined)).json();
  t.equal(ok.state, 'verified');
  t.equal((await post(`/v1/public-url/domains/${d.domain_id}/verify`, undefined, b.auth)).statusCode, 404);

  // Another account may add the name, and verifies nothing while this one holds it.
  const theirs = (await post('/v1/public-url/domains', { domain: 'app.example.com' }, b.auth)).json();
  dns.txt.set('_svc-challenge.app.example.com', [theirs.records[0].value]);
  const refused = await post(`/v1/public-url/domains/${theirs.domain_id}/verify`, undefined, b.auth);
  t.equal(refused.statusCode, 409);
  const list = (await app.inject({ method: 'GET', url: '/v1/public-url/domains', headers: a.auth })).json();
  t.match(list.items, [{ domain_id: d.domain_id, state: 'verified' }]);
});
