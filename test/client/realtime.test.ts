import t from 'tap';
import { clientApp, collect, rejects } from './client-app.js';
import { NativeClient } from '../plugins/realtime/native-client.js';

// client.realtime against a listening gateway: a token a socket opens, channels, publish, presence, the Pusher app.

t.test('token, channels, publish to a socket, presence, Pusher credentials; errors as SvcError', async (t) => {
  const { c, url } = await clientApp(t);
  const tok = await c.realtime.token({ user_id: 'u1', channels: ['presence-lobby', 'news'] });
  t.match(tok, { token: /^svt1\./, client_id: /^rtc_/, endpoint: /\/v1\/realtime\/ws$/ });
  // clientApp listens on a port of its own, not the one public_url names.
  const ws = await NativeClient.open(`${url.replace(/^http/, 'ws')}/v1/realtime/ws`, tok.token);
  t.teardown(() => ws.close());
  await ws.ask({ type: 'subscribe', channel: 'news', id: '1' });
  await ws.ask({ type: 'subscribe', channel: 'presence-lobby', id: '2' });

  const sent = await c.realtime.publish({ channel: 'news', event: 'e', data: { a: 1 } }, { idempotencyKey: 'p1' });
  t.match(sent, { message_id: /^msg_/ });
  t.match(await ws.next((f) => f.type === 'message'), { data: { a: 1 }, message_id: sent.message_id });
  t.same((await c.realtime.presence('presence-lobby')).members, [{ client_id: tok.client_id, user_id: 'u1' }]);

  await c.realtime.createChannel({ name: 'a' });
  await c.realtime.createChannel({ name: 'private-b' });
  t.same(
    (await collect(c.realtime.iterateChannels({ limit: 1 }))).map((ch) => ch.name),
    ['private-b', 'a']
  );
  t.same(await c.realtime.deleteChannel('a'), { ok: true });
  await rejects(t, c.realtime.deleteChannel('a'), { code: 'not_found', status: 404 }, 'deleted once');
  await rejects(t, c.realtime.token({ ttl_seconds: 10 }), { code: 'validation_failed', status: 400 }, 'too short');
  t.match(await c.realtime.pusherApp(), { app_id: /^\d+$/, key: /^[0-9a-f]+$/ });
});
