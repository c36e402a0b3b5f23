import t from 'tap';
import { activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import WebSocket from 'ws';
import { until } from '../../helpers/wait.js';
import { NativeClient, refusedWith } from './native-client.js';

// The native protocol on a listening gateway with real `ws` clients.

const LIMITS = { free: { connections: 4, messages_per_second: 10_000, channels_per_connection: 3 } };

async function setup(t: Parameters<typeof listeningApp>[0], realtime: object = {}) {
  const { app } = await listeningApp(t, { plugins: { realtime: { tier_limits: LIMITS, ...realtime } } });
  const a = await activate(app);
  const token = async (body: object) => {
    const r = await app.inject({ method: 'POST', url: '/v1/realtime/token', payload: body, headers: a.auth });
    if (r.statusCode !== 200) throw new Error(r.body);
    return r.json() as { token: string; client_id: string; endpoint: string };
  };
  const open = async (body: object) => {
    const tok = await token(body);
    const c = await NativeClient.open(tok.endpoint, tok.token);
    t.teardown(() => c.close());
    return c;
  };
  const publish = async (channel: string, event: string, data: unknown) => {
    const r = await app.inject({
      method: 'POST',
      url: '/v1/realtime/publish',
      payload: { channel, event, data },
      headers: a.auth,
    });
    if (r.statusCode !== 200) throw new Error(r.body);
    return r.json().message_id as string;
  };
  return { app, a, token, open, publish };
}

/** A client on a new socket, or undefined when the upgrade was refused. */
function admitted(tok: { endpoint: string; token: string }): Promise<NativeClient | undefined> {
  const ws = new WebSocket(`${tok.endpoint}?token=${tok.token}`);
  ws.on('error', () => undefined);
  const c = new NativeClient(ws);
  return new Promise((resolve) => {
    ws.once('open', () => resolve(c.next((f) => f.type === 'welcome').then(() => c)));
    ws.once('unexpected-response', () => {
      ws.terminate();
      resolve(undefined);
    });
  });
}

/** Native sockets the gateway has closed as slow consumers, from its /metrics. */
async function slowCloses(app: Awaited<ReturnType<typeof listeningApp>>['app']): Promise<number> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const m = /^realtime_slow_consumer_closes_total\{protocol="native"\} (\d+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

t.test('subscribe, receive API publishes in order, channels outside the token refused', async (t) => {
  const { open, publish } = await setup(t);
  const c = await open({ user_id: 'u1', channels: ['orders', 'private-*'] });
  t.match(await c.ask({ type: 'subscribe', channel: 'orders', id: '1' }), { type: 'subscribed', channel: 'orders' });
  const ids = [];
  for (let i = 0; i < 20; i++) ids.push(await publish('orders', 'created', { n: i }));
  for (let i = 0; i < 20; i++) {
    const m = await c.next((f) => f.type === 'message');
    t.match(m, { channel: 'orders', event: 'created', data: { n: i }, message_id: ids[i] }, `message ${i} in order`);
  }
  t.match(await c.ask({ type: 'subscribe', channel: 'secret', id: '2' }), { type: 'error', code: 'forbidden' });
  t.match(await c.ask({ type: 'subscribe', channel: 'private-a', id: '3' }), { type: 'subscribed' });
  t.match(await c.ask({ type: 'subscribe', channel: 'a b', id: '4' }), { type: 'error', code: 'validation_failed' });
  t.match(await c.ask({ type: 'nonsense', id: '5' }), { type: 'error', code: 'invalid_request' });
  t.match(await c.ask({ type: 'ping', id: '6' }), { type: 'pong' });
  t.match(await c.ask({ type: 'unsubscribe', channel: 'orders', id: '7' }), { type: 'unsubscribed' });
  await publish('orders', 'after', 1);
  await publish('private-a', 'marker', 1);
  t.match(await c.next((f) => f.type === 'message'), { event: 'marker' }, 'nothing from orders after unsubscribe');

  // Without a list a token reaches public channels only.
  const pub = await open({});
  t.match(await pub.ask({ type: 'subscribe', channel: 'orders', id: 'a' }), { type: 'subscribed' });
  t.match(await pub.ask({ type: 'subscribe', channel: 'private-a', id: 'b' }), { type: 'error', code: 'forbidden' });
  t.match(await pub.ask({ type: 'subscribe', channel: 'x1', id: 'c' }), { type: 'subscribed' });
  t.match(await pub.ask({ type: 'subscribe', channel: 'x2', id: 'd' }), { type: 'subscribed' });
  t.match(
    await pub.ask({ type: 'subscribe', channel: 'x3', id: 'e' }),
    { code: 'payload_too_large' },
    '3 channels a socket'
  );
});

t.test('tampered, expired and missing tokens: 401 before the upgrade; expiry while open: 4401', async (t) => {
  const { app, token } = await setup(t);
  const tok = await token({ channels: ['orders'] });
  const [p, body, mac] = tok.token.split('.');
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
  const forged = Buffer.from(JSON.stringify({ ...claims, ch: ['*'] })).toString('base64url');
  const tampered = await refusedWith(`${tok.endpoint}?token=${p}.${forged}.${mac}`);
  t.equal(tampered.status, 401);
  t.equal(tampered.body.error.code, 'unauthenticated');
  const old = app.svc.tokens.sign('realtime client', { a: claims.a, c: 'rtc_x', tr: 'free' }, -1).token;
  t.match(await refusedWith(`${tok.endpoint}?token=${old}`), { status: 401, body: { error: { message: /expired/ } } });
  t.equal((await refusedWith(tok.endpoint)).status, 401);
  const other = app.svc.tokens.sign('checkout', { a: claims.a, c: 'rtc_x', tr: 'free' }, 60).token;
  t.equal((await refusedWith(`${tok.endpoint}?token=${other}`)).status, 401, 'a token of another purpose');

  const soon = app.svc.tokens.sign('realtime client', { a: claims.a, c: 'rtc_y', tr: 'free' }, 0.3).token;
  const c = await NativeClient.open(tok.endpoint, soon);
  t.match(await c.closed, { code: 4401 });
});

t.test('presence: members listed on subscribe, joins and leaves announced, the API agrees', async (t) => {
  const { app, a, open } = await setup(t);
  const grant = { channels: ['presence-room'] };
  const ann = await open({ ...grant, user_id: 'ann' });
  await ann.ask({ type: 'subscribe', channel: 'presence-room', id: '1' });
  const bob = await open({ ...grant, user_id: 'bob' });
  const sub = await bob.ask({ type: 'subscribe', channel: 'presence-room', id: '1' });
  t.same(sub.members.map((m: any) => m.user_id).sort(), ['ann', 'bob']);
  t.match(await ann.next((f) => f.type === 'member_added'), { channel: 'presence-room', member: { user_id: 'bob' } });
  const api = async () =>
    (await app.inject({ method: 'GET', url: '/v1/realtime/channels/presence-room/presence', headers: a.auth })).json();
  t.same((await api()).members.map((m: any) => m.user_id).sort(), ['ann', 'bob']);
  await bob.close();
  t.match(await ann.next((f) => f.type === 'member_removed'), { member: { user_id: 'bob' } });
  t.same(
    (await api()).members.map((m: any) => m.user_id),
    ['ann']
  );
});

t.test('resume: the messages missed while away, then live ones, none twice', async (t) => {
  const { open, publish } = await setup(t);
  const first = await open({ channels: ['feed'] });
  await first.ask({ type: 'subscribe', channel: 'feed', id: '1' });
  await publish('feed', 'e', 0);
  const seen = (await first.next((f) => f.type === 'message')).message_id;
  await first.close();
  for (let i = 1; i <= 3; i++) await publish('feed', 'e', i);
  const back = await open({ channels: ['feed'] });
  const sub = await back.ask({ type: 'subscribe', channel: 'feed', since: seen, id: '1' });
  t.equal(sub.resumed, true, 'nothing lost');
  await publish('feed', 'e', 4);
  const got = [];
  for (let i = 0; i < 4; i++) got.push((await back.next((f) => f.type === 'message')).data);
  t.same(got, [1, 2, 3, 4]);
  const unknown = await back.ask({ type: 'subscribe', channel: 'feed2', since: 'msg_gone', id: '2' });
  t.match(unknown, { type: 'error', code: 'forbidden' });
  const other = await open({ channels: ['feed*'] });
  t.equal((await other.ask({ type: 'subscribe', channel: 'feed2', since: 'msg_gone', id: '3' })).resumed, false);
});

t.test('deleting a declared channel unsubscribes its sockets and forgets its history', async (t) => {
  const { app, a, open, publish } = await setup(t);
  const made = await app.inject({
    method: 'POST',
    url: '/v1/realtime/channels',
    payload: { name: 'temp' },
    headers: a.auth,
  });
  t.equal(made.statusCode, 200);
  const c = await open({ channels: ['temp'] });
  await c.ask({ type: 'subscribe', channel: 'temp', id: '1' });
  const first = await publish('temp', 'e', 1);
  await c.next((f) => f.type === 'message');
  const del = await app.inject({ method: 'DELETE', url: '/v1/realtime/channels/temp', headers: a.auth });
  t.same(del.json(), { ok: true });
  t.match(await c.next((f) => f.type === 'unsubscribed'), { channel: 'temp', reason: /deleted/ });
  const again = await open({ channels: ['temp'] });
  t.equal(
    (await again.ask({ type: 'subscribe', channel: 'temp', since: first, id: '2' })).resumed,
    false,
    'no history'
  );
});

t.test('client publish where the token allows, not echoed to the sender', async (t) => {
  const { open } = await setup(t);
  const talker = await open({ channels: ['chat'], publish: true });
  const listener = await open({ channels: ['chat'] });
  await talker.ask({ type: 'subscribe', channel: 'chat', id: 's' });
  await listener.ask({ type: 'subscribe', channel: 'chat', id: 's' });
  const ok = await talker.ask({ type: 'publish', channel: 'chat', event: 'say', data: { text: 'hi' }, id: 'p' });
  t.match(ok, { type: 'published', message_id: /^msg_/ });
  t.match(await listener.next((f) => f.type === 'message'), {
    event: 'say',
    data: { text: 'hi' },
    message_id: ok.message_id,
  });
  t.match(await listener.ask({ type: 'publish', channel: 'chat', event: 'say', data: 1, id: 'q' }), {
    code: 'forbidden',
  });
  t.match(await talker.ask({ type: 'publish', channel: 'other', event: 'say', data: 1, id: 'r' }), {
    code: 'forbidden',
  });
  const big = await talker.ask({
    type: 'publish',
    channel: 'chat',
    event: 'say',
    data: 'x'.repeat(300 * 1024),
    id: 'b',
  });
  t.match(big, { code: 'payload_too_large' });
  t.match(await talker.ask({ type: 'ping', id: 'z' }), { type: 'pong' });
  t.notOk(
    talker.frames.some((f) => f.type === 'message'),
    'the sender got none of its own'
  );
});

t.test('limits: client publishes over the tier messages-a-second rate are refused, the socket stays', async (t) => {
  const { open } = await setup(t, {
    tier_limits: { free: { connections: 4, messages_per_second: 2, channels_per_connection: 3 } },
  });
  const talker = await open({ channels: ['chat'], publish: true });
  const say = (id: string) => talker.ask({ type: 'publish', channel: 'chat', event: 'say', data: id, id });
  t.match(await say('1'), { type: 'published' });
  t.match(await say('2'), { type: 'published' });
  t.match(await say('3'), { type: 'error', code: 'rate_limited' });
  t.match(await talker.ask({ type: 'ping', id: 'z' }), { type: 'pong' }, 'still open');
});

t.test('limits: sockets per account (429), slow consumers closed with 4100', async (t) => {
  const { app, token, open, publish } = await setup(t, { max_buffered_bytes: 1024 });
  const slow = await open({ channels: ['flood'] });
  await slow.ask({ type: 'subscribe', channel: 'flood', id: '1' });
  const others = [await open({}), await open({}), await open({})];
  const tok = await token({});
  t.match(await refusedWith(`${tok.endpoint}?token=${tok.token}`), {
    status: 429,
    body: { error: { code: 'rate_limited' } },
  });
  await others[0].close();
  // The slow client stops reading; the gateway stops buffering for it instead of growing without bound.
  const socket = (slow.ws as any)._socket;
  socket.pause();
  const payload = 'y'.repeat(200 * 1024);
  let sent = 0;
  while ((await slowCloses(app)) === 0) {
    if (++sent > 200) throw new Error('200 messages of 200 KiB and the paused socket was not closed');
    await publish('flood', 'big', payload);
  }
  // The close frame waits behind the data: a client that reads again gets what was waiting, then 4100.
  let received = 0;
  slow.ws.on('message', () => received++);
  socket.resume();
  t.match(await slow.closed, { code: 4100, reason: 'slow consumer: too much data waiting' });
  t.ok(received > 0 && received < sent, `${received} of the ${sent} messages reached it, not all of them`);
  t.equal(await slowCloses(app), 1, 'counted once');
});

t.test('a slow consumer that never reads again is dropped (1006), counted, and frees its slot', async (t) => {
  const { app, token, open, publish } = await setup(t, {
    max_buffered_bytes: 1024,
    activity_timeout_seconds: 3,
    tier_limits: { free: { ...LIMITS.free, connections: 1 } },
  });
  const slow = await open({ channels: ['flood'] });
  await slow.ask({ type: 'subscribe', channel: 'flood', id: '1' });
  const socket = (slow.ws as any)._socket;
  socket.pause();
  const payload = 'y'.repeat(200 * 1024);
  for (let sent = 0; (await slowCloses(app)) === 0; sent++) {
    if (sent >= 200) throw new Error('200 messages of 200 KiB and the paused socket was not closed');
    // Paused, it cannot answer the gateway's pings; a frame of its own is activity too, so 4408 stays out of it.
    slow.send({ type: 'ping', id: `k${sent}` });
    await publish('flood', 'big', payload);
  }
  // Reading nothing, it is destroyed without its close frame (which never left the gateway's buffer):
  // the tier's one slot frees while it is still paused, and what it reads afterwards ends without a code.
  let again: NativeClient | undefined;
  await until('the dropped socket to free its slot', async () => !!(again = await admitted(await token({}))), 60_000);
  t.teardown(() => again?.close());
  socket.resume();
  t.match(await slow.closed, { code: 1006 });
  t.equal(await slowCloses(app), 1, 'counted once');
  t.match(await again!.ask({ type: 'ping', id: 'p' }), { type: 'pong' });
});

t.test('a peer that stops answering pings is closed (4408); one that answers stays', async (t) => {
  const { token } = await setup(t, { activity_timeout_seconds: 1 });
  const tok = await token({});
  const deaf = new NativeClient(new WebSocket(`${tok.endpoint}?token=${tok.token}`, { autoPong: false }));
  const alive = await NativeClient.open(tok.endpoint, tok.token);
  t.teardown(() => alive.close());
  t.match(await deaf.closed, { code: 4408 });
  t.match(await alive.ask({ type: 'ping', id: 'p' }), { type: 'pong' }, 'the answering socket is still open');
});
