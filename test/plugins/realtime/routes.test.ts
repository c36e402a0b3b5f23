import t from 'tap';
import { activate, makeApp } from '../../helpers/app.js';

// The HTTP half of realtime on app.inject(): tokens, channels, publish and its abuse, presence, the Pusher app.

t.test('tokens: signed, bounded lifetime, refused when tampered or expired', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const post = (payload: object) => app.inject({ method: 'POST', url: '/v1/realtime/token', payload, headers: a.auth });

  const before = Date.now();
  const res = await post({ user_id: 'u1', channels: ['orders', 'presence-room-*'] });
  t.equal(res.statusCode, 200, res.body);
  const tok = res.json();
  t.match(tok, { token: /^svt1\./, client_id: /^rtc_/, endpoint: /^ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime\/ws$/ });
  const ttl = Date.parse(tok.expires_at) - before;
  t.ok(ttl >= 3599_000 && ttl <= 3601_000, `default lifetime one hour (${ttl} ms)`);

  const short = (await post({ ttl_seconds: 60 })).json();
  t.ok(Date.parse(short.expires_at) - before <= 61_000);
  for (const ttl_seconds of [59, 86_401]) t.equal((await post({ ttl_seconds })).statusCode, 400, `ttl ${ttl_seconds}`);
  t.equal((await post({ channels: ['bad channel'] })).statusCode, 400, 'a grant outside the alphabet');
  t.equal((await post({ extra: 1 })).statusCode, 400, 'unknown fields');
  const anon = await app.inject({ method: 'POST', url: '/v1/realtime/token', payload: {} });
  t.equal(anon.statusCode, 401);

  // The token is checked without a database read: the signer alone says tampered or expired.
  const [p, body, mac] = tok.token.split('.');
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
  t.same(claims.ch, ['orders', 'presence-room-*']);
  const forged = Buffer.from(JSON.stringify({ ...claims, ch: ['*'] })).toString('base64url');
  t.throws(() => app.svc.tokens.verify('realtime client', `${p}.${forged}.${mac}`), { code: 'unauthenticated' });
});

t.test('channels: declare, list, delete; types by prefix; other accounts see nothing', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const b = await activate(app);
  const req = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object, who = a) =>
    app.inject({ method, url, payload, headers: who.auth });

  const made = await req('POST', '/v1/realtime/channels', { name: 'lobby', type: 'presence' });
  t.equal(made.statusCode, 200, made.body);
  t.match(made.json(), { channel_id: /^ch_/, name: 'lobby', type: 'presence', created_at: String });
  t.match((await req('POST', '/v1/realtime/channels', { name: 'private-x' })).json(), { type: 'private' });
  t.equal((await req('POST', '/v1/realtime/channels', { name: 'lobby' })).json().error.code, 'already_exists');
  const clash = await req('POST', '/v1/realtime/channels', { name: 'presence-y', type: 'public' });
  t.equal(clash.statusCode, 422, 'a prefix that says another type');
  t.equal((await req('POST', '/v1/realtime/channels', { name: 'a b' })).statusCode, 400);

  const list = (await req('GET', '/v1/realtime/channels?limit=1')).json();
  t.equal(list.items.length, 1);
  t.equal(list.items[0].name, 'private-x', 'newest first');
  const rest = (await req('GET', `/v1/realtime/channels?cursor=${list.next_cursor}`)).json();
  t.same(
    rest.items.map((c: any) => c.name),
    ['lobby']
  );
  t.same((await req('GET', '/v1/realtime/channels', undefined, b)).json().items, [], "b sees none of a's");
  t.equal((await req('DELETE', '/v1/realtime/channels/lobby', undefined, b)).statusCode, 404, "b cannot delete a's");
  t.same((await req('DELETE', '/v1/realtime/channels/lobby')).json(), { ok: true });
  t.equal((await req('DELETE', '/v1/realtime/channels/lobby')).statusCode, 404);
  // The same name is free again, and b may have its own.
  t.equal((await req('POST', '/v1/realtime/channels', { name: 'lobby' }, b)).statusCode, 200);
});

t.test('publish: message ids, idempotent, 413 over the cap, 429 over the rate; presence is empty', async (t) => {
  const { app } = await makeApp(t, {
    plugins: {
      realtime: { tier_limits: { free: { connections: 5, messages_per_second: 3, channels_per_connection: 5 } } },
    },
  });
  const a = await activate(app);
  const publish = (payload: object) =>
    app.inject({ method: 'POST', url: '/v1/realtime/publish', payload, headers: a.auth });
  const rows = async () =>
    Number(
      (
        await app.svc.db
          .selectFrom('realtime_messages')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n
    );

  const first = await publish({ channel: 'orders', event: 'created', data: { id: 1 }, idempotency_key: 'k1' });
  t.equal(first.statusCode, 200, first.body);
  t.match(first.json(), { message_id: /^msg_/ });
  const again = await publish({ channel: 'orders', event: 'created', data: { id: 1 }, idempotency_key: 'k1' });
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.same(again.json(), first.json());
  t.equal(await rows(), 1, 'the replay stored nothing');

  const big = await publish({ channel: 'orders', event: 'big', data: 'x'.repeat(300 * 1024) });
  t.equal(big.statusCode, 413);
  t.equal(big.json().error.code, 'payload_too_large');
  const huge = await publish({ channel: 'orders', event: 'big', data: 'x'.repeat(1024 * 1024) });
  t.equal(huge.statusCode, 413, 'a 1 MiB body');
  t.equal((await publish({ channel: 'orders', event: 'pusher:x', data: 1 })).statusCode, 400, 'a reserved name');
  t.equal((await publish({ channel: 'orders', event: 'e' })).statusCode, 400, 'data is required');
  t.equal(await rows(), 1, 'refused publishes stored nothing');

  t.equal((await publish({ channel: 'orders', event: 'e', data: null })).statusCode, 200);
  t.equal((await publish({ channel: 'orders', event: 'e', data: [] })).statusCode, 200);
  const over = await publish({ channel: 'orders', event: 'e', data: 1 });
  t.equal(over.statusCode, 429, 'three a second on this tier');
  t.ok(Number(over.headers['retry-after']) >= 1);

  const presence = await app.inject({
    method: 'GET',
    url: '/v1/realtime/channels/presence-x/presence',
    headers: a.auth,
  });
  t.same(presence.json(), { members: [] });
});

t.test('the Pusher app: made once, its secret sealed at rest', async (t) => {
  const { app } = await makeApp(t);
  const a = await activate(app);
  const get = () => app.inject({ method: 'POST', url: '/v1/realtime/pusher', headers: a.auth });
  const first = (await get()).json();
  t.match(first, {
    app_id: /^\d+$/,
    key: /^[0-9a-f]{20}$/,
    secret: /^[0-9a-f]{40}$/,
    ws_host: '127.0.0.1',
    force_tls: false,
  });
  t.same((await get()).json(), first, 'the same app again');
  const row = await app.svc.db.selectFrom('realtime_apps').selectAll().executeTakeFirstOrThrow();
  t.notOk(String(row.secret_sealed).includes(first.secret), 'not stored in clear');
});
