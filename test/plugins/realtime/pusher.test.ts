import t from 'tap';
import Pusher from 'pusher-js';
import PusherServer from 'pusher';
import { pusherApp } from './pusher-app.js';

// Pusher Channels protocol 7: pusher-js (Node build) and the `pusher` server SDK, unchanged, against the gateway.

type Tap = Parameters<typeof pusherApp>[0];

async function setup(t: Tap) {
  const { app, a, creds, server, port } = await pusherApp(t);
  /** A pusher-js client whose authorizer signs with the SDK (as an app's auth endpoint would). */
  const client = async (user?: { user_id: string; user_info?: object }, sign = server) => {
    const p = new Pusher(creds.key, {
      cluster: 'local',
      wsHost: '127.0.0.1',
      wsPort: port,
      forceTLS: false,
      enabledTransports: ['ws'],
      channelAuthorization: {
        endpoint: '/unused',
        transport: 'ajax',
        customHandler: ({ socketId, channelName }, cb) =>
          cb(null, sign.authorizeChannel(socketId, channelName, user) as any),
      },
    });
    t.teardown(() => p.disconnect());
    await new Promise<void>((resolve) => p.connection.bind('connected', () => resolve()));
    return p;
  };
  const subscribed = (p: Pusher, name: string) =>
    new Promise<any>((resolve, reject) => {
      const ch = p.subscribe(name);
      ch.bind('pusher:subscription_succeeded', (data: unknown) => resolve({ ch, data }));
      ch.bind('pusher:subscription_error', (e: unknown) =>
        reject(Object.assign(new Error('subscription_error'), { e }))
      );
    });
  const event = (ch: any, name: string) => new Promise<any>((resolve) => ch.bind(name, resolve));
  return { app, a, creds, server, client, subscribed, event, port };
}

t.test('public and private channels get events from the server SDK and from /v1/realtime/publish', async (t) => {
  const { app, a, server, client, subscribed, event } = await setup(t);
  const p = await client();
  const { ch: pub } = await subscribed(p, 'news');
  const fromSdk = event(pub, 'headline');
  await server.trigger('news', 'headline', { title: 'hello' });
  t.same(await fromSdk, { title: 'hello' });
  const fromApi = event(pub, 'update');
  const r = await app.inject({
    method: 'POST',
    url: '/v1/realtime/publish',
    payload: { channel: 'news', event: 'update', data: { n: 1 } },
    headers: a.auth,
  });
  t.equal(r.statusCode, 200);
  t.same(await fromApi, { n: 1 });

  const { ch: priv } = await subscribed(p, 'private-orders');
  const batch = event(priv, 'paid');
  await server.triggerBatch([{ channel: 'private-orders', name: 'paid', data: { id: 7 } }]);
  t.same(await batch, { id: 7 });

  // Client events: on private channels, to the others only.
  const q = await client();
  const { ch: priv2 } = await subscribed(q, 'private-orders');
  const typed = event(priv2, 'client-typing');
  let echoed = false;
  priv.bind('client-typing', () => (echoed = true));
  t.ok(priv.trigger('client-typing', { who: 'p' }));
  t.same(await typed, { who: 'p' });
  const marker = event(priv, 'marker');
  await server.trigger('private-orders', 'marker', 1);
  await marker;
  t.notOk(echoed, 'not echoed to the sender');
});

t.test('client events on a presence channel name their sender', async (t) => {
  const { client, subscribed } = await setup(t);
  const ann = await client({ user_id: 'ann' });
  const bob = await client({ user_id: 'bob' });
  const { ch: annCh } = await subscribed(ann, 'presence-chat');
  const { ch: bobCh } = await subscribed(bob, 'presence-chat');
  const heard = new Promise<any[]>((resolve) =>
    bobCh.bind('client-hi', (d: unknown, meta: unknown) => resolve([d, meta]))
  );
  annCh.trigger('client-hi', { n: 1 });
  t.same(await heard, [{ n: 1 }, { user_id: 'ann' }]);
});

t.test('presence: members match on every side; joins and leaves', async (t) => {
  const { app, a, client, subscribed } = await setup(t);
  const ann = await client({ user_id: 'ann', user_info: { name: 'Ann' } });
  const { ch: annCh, data: members } = await subscribed(ann, 'presence-room');
  t.equal(members.count, 1);
  t.same(members.me, { id: 'ann', info: { name: 'Ann' } });
  const added = new Promise<any>((resolve) => annCh.bind('pusher:member_added', resolve));
  const bob = await client({ user_id: 'bob' });
  const { data: bobMembers } = await subscribed(bob, 'presence-room');
  t.equal(bobMembers.count, 2);
  t.same(Object.keys(bobMembers.members).sort(), ['ann', 'bob']);
  t.match(await added, { id: 'bob' });
  t.equal(annCh.members.count, 2);
  const api = async () =>
    (await app.inject({ method: 'GET', url: '/v1/realtime/channels/presence-room/presence', headers: a.auth })).json();
  t.same((await api()).members.map((m: any) => m.user_id).sort(), ['ann', 'bob']);

  // A second socket of bob's: one member still; bob leaves when his last socket does.
  const bob2 = await client({ user_id: 'bob' });
  await subscribed(bob2, 'presence-room');
  t.equal(annCh.members.count, 2);
  const removed = new Promise<any>((resolve) => annCh.bind('pusher:member_removed', resolve));
  bob.disconnect();
  bob2.disconnect();
  t.match(await removed, { id: 'bob' });
  t.equal(annCh.members.count, 1);
  t.same(
    (await api()).members.map((m: any) => m.user_id),
    ['ann']
  );
});

t.test('refused: a wrong auth signature, an unknown key, a REST call with the wrong secret or 1 MiB', async (t) => {
  const { creds, client, subscribed, port, server } = await setup(t);
  await t.rejects(server.trigger('news', 'big', 'x'.repeat(1024 * 1024)), { status: 413 }, 'a 1 MiB event');
  const forger = new PusherServer({
    appId: creds.app_id,
    key: creds.key,
    secret: 'f'.repeat(40),
    host: '127.0.0.1',
    port: String(port),
  });
  const p = await client(undefined, forger);
  const err = await subscribed(p, 'private-orders').then(
    () => undefined,
    (e) => e.e
  );
  t.match(err, { type: 'AuthError', status: 401 });
  const pres = await client({ user_id: 'eve' }, forger);
  t.match(await subscribed(pres, 'presence-room').catch((e) => e.e), { status: 401 });
  await t.rejects(forger.trigger('news', 'x', 1), { status: 401 });

  const stranger = new Pusher('0000', {
    cluster: 'local',
    wsHost: '127.0.0.1',
    wsPort: port,
    forceTLS: false,
    enabledTransports: ['ws'],
  });
  t.teardown(() => stranger.disconnect());
  const refusal = await new Promise<any>((resolve) => stranger.connection.bind('error', resolve));
  t.match(refusal, { error: { type: 'PusherError', data: { code: 4001 } } });
});
