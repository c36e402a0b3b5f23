import t from 'tap';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { activate } from '../../helpers/app.js';
import { money, scriptedApp, script } from '../../helpers/scripted-app.js';
import { sleep, until } from '../../helpers/wait.js';

// database-independent: the router on a socket; the holds it gives back are core/wallet's tests', on both.

// The socket is the point here: a client that hangs up mid-call, over real TCP on loopback.
t.test('a client that hangs up cancels the vendor call: no failover, nothing charged', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a', price_micros: 5_000 }, { id: 'b' }]);
  const acct = await activate(app);
  script('a').mode = 'timeout';
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;

  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/meter/run',
    headers: { ...acct.auth, 'content-type': 'application/json' },
  });
  req.on('error', () => {}); // the hang-up below is ours
  req.end(JSON.stringify({ input: 'x', timeout_seconds: 600 }));
  const started = async () => script('a').calls.length === 1 && (await money(app, acct.account_id)).holds === 1;
  await until('the vendor call to start', started);
  req.destroy();

  // Without the cancel, a would hold the reservation for its 5-minute share of the deadline and
  // b would be tried after: released within until's 15 s, it was the hang-up that released it.
  await until('the hold to be given back', async () => (await money(app, acct.account_id)).holds === 0);
  await sleep(100);
  t.equal(script('b').calls.length, 0, 'no failover for a caller who left');
  t.notOk(app.svc.router.cooldowns.cooling('a'), 'a caller leaving says nothing about the vendor');
  t.same(await money(app, acct.account_id), { balance: 5_000_000, usage: [], holds: 0 });
});

t.test('a completed response does not abort anything afterwards', async (t) => {
  const { app } = await scriptedApp(t, [{ id: 'a' }]);
  const acct = await activate(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/v1/meter/run`, {
    method: 'POST',
    headers: { ...acct.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'x' }),
  });
  t.equal(res.status, 200);
  t.equal((await res.json()).vendor, 'a');
  t.equal(res.headers.get('x-svc-vendor'), 'a');
  t.equal((await money(app, acct.account_id)).balance, 5_000_000 - 1_000);
});
