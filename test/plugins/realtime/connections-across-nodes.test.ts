import t from 'tap';
import { activate, ONE_NODE_ONLY } from '../../helpers/app.js';
import { twoNodes } from '../../helpers/two-nodes.js';
import { NativeClient, refusedWith } from './native-client.js';

// The tier's socket limit counts an account's sockets on every node (redis_url set): node A in
// this process, node B a real process on the same PostgreSQL and Redis, killed with SIGKILL so
// its count can only go away by expiring.

/** The first socket the node accepts, trying every 50 ms (up to 30 s): waits for an event on another node. */
async function admitted(endpoint: string, token: () => Promise<string>): Promise<NativeClient | undefined> {
  for (let i = 0; i < 600; i++) {
    const c = await NativeClient.open(endpoint, await token()).catch(() => undefined);
    if (c) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

t.test(
  "an account's sockets count on all nodes; a dead node's stop counting after the timeout",
  { skip: ONE_NODE_ONLY },
  async (t) => {
    const realtime = {
      presence_timeout_seconds: 3,
      tier_limits: { free: { connections: 2, messages_per_second: 100, channels_per_connection: 10 } },
    };
    const { app, base, b } = await twoNodes(t, { plugins: { realtime } });
    const a = await activate(app);
    const token = async () =>
      (await app.inject({ method: 'POST', url: '/v1/realtime/token', payload: {}, headers: a.auth })).json().token;
    const wsA = `${base.replace(/^http/, 'ws')}/v1/realtime/ws`;
    const wsB = `${b.url.replace(/^http/, 'ws')}/v1/realtime/ws`;
    const url = async (ws: string) => `${ws}?token=${encodeURIComponent(await token())}`;

    const onA = await NativeClient.open(wsA, await token());
    t.teardown(() => onA.close());
    const onB = await NativeClient.open(wsB, await token());
    t.match(await refusedWith(await url(wsA)), { status: 429 }, 'A refuses a third socket: one is on B');
    t.match(await refusedWith(await url(wsB)), { status: 429 }, 'so does B');

    await onB.close();
    // B's release reaches Redis after the close frame: wait until A admits again.
    const again = await admitted(wsA, token);
    t.ok(again, "B's closed socket no longer counts");
    t.teardown(() => again?.close());
    t.match(await refusedWith(await url(wsA)), { status: 429 }, 'the limit holds again with two on A');
    await again?.close();

    const onB2 = await NativeClient.open(wsB, await token());
    t.ok(onB2, 'B takes the free slot');
    t.match(await refusedWith(await url(wsA)), { status: 429 }, "B's socket counts on A");
    b.proc.kill('SIGKILL');
    await b.exited;
    // The dead node never releases: its count expires with its heartbeat (3 s here).
    const after = await admitted(wsA, token);
    t.ok(after, "the dead node's socket stopped counting");
    await after?.close();
  }
);
