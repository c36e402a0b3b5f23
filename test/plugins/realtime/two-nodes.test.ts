import t from 'tap';
import { activate, ONE_NODE_ONLY } from '../../helpers/app.js';
import { twoNodes } from '../../helpers/two-nodes.js';
import { NativeClient } from './native-client.js';

// Two gateways on one PostgreSQL and one Redis: node A in this process, node B a real process
// (killed with SIGKILL, so it leaves nothing behind but its presence rows going stale).

const MESSAGES = 200;

t.test(
  'a subscriber on one node gets every message of the other in order; a dead node’s members leave',
  { skip: ONE_NODE_ONLY },
  async (t) => {
    const realtime = {
      presence_timeout_seconds: 3,
      tier_limits: { free: { connections: 100, messages_per_second: 100_000, channels_per_connection: 10 } },
    };
    const { app, base, b } = await twoNodes(t, { plugins: { realtime } });
    t.equal(app.svc.bus.kind, 'redis');
    const a = await activate(app);
    const token = async (body: object) =>
      (await app.inject({ method: 'POST', url: '/v1/realtime/token', payload: body, headers: a.auth })).json().token;
    const wsA = `${base.replace(/^http/, 'ws')}/v1/realtime/ws`;
    const wsB = `${b.url.replace(/^http/, 'ws')}/v1/realtime/ws`;

    const onB = await NativeClient.open(wsB, await token({ channels: ['feed', 'presence-room'], user_id: 'bob' }));
    t.teardown(() => onB.close());
    await onB.ask({ type: 'subscribe', channel: 'feed', id: '1' });
    const ids: string[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      const r = await app.inject({
        method: 'POST',
        url: '/v1/realtime/publish',
        payload: { channel: 'feed', event: 'n', data: i },
        headers: a.auth,
      });
      ids.push(r.json().message_id);
    }
    const got: number[] = [];
    for (let i = 0; i < MESSAGES; i++) got.push((await onB.next((f) => f.type === 'message')).data);
    t.same(got, [...Array(MESSAGES).keys()], `${MESSAGES} messages published on A, received on B in order`);

    // Presence across nodes, then B dies.
    const onA = await NativeClient.open(wsA, await token({ channels: ['presence-room'], user_id: 'ann' }));
    t.teardown(() => onA.close());
    await onA.ask({ type: 'subscribe', channel: 'presence-room', id: '1' });
    const bobJoins = onA.next((f) => f.type === 'member_added');
    const sub = await onB.ask({ type: 'subscribe', channel: 'presence-room', id: '2' });
    t.same(sub.members.map((m: any) => m.user_id).sort(), ['ann', 'bob'], 'B lists the member on A');
    t.match(await bobJoins, { member: { user_id: 'bob' } }, 'A hears of the join on B');

    const bobLeaves = onA.next((f) => f.type === 'member_removed');
    b.proc.kill('SIGKILL');
    await b.exited;
    t.match(await bobLeaves, { member: { user_id: 'bob' } }, "the dead node's member left after the timeout");
    const left = await app.inject({
      method: 'GET',
      url: '/v1/realtime/channels/presence-room/presence',
      headers: a.auth,
    });
    t.same(
      left.json().members.map((m: any) => m.user_id),
      ['ann']
    );
  }
);
