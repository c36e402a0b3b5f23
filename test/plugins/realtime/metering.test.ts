import t from 'tap';
import { activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { until } from '../../helpers/wait.js';
import { NativeClient } from './native-client.js';

// Usage reaches the wallet: each publish and each delivered copy, and socket minutes.

t.test('messages and connection minutes are debited by the meter', async (t) => {
  const { app } = await listeningApp(t, {
    plugins: {
      realtime: {
        price_per_million_messages_usd: 1_000_000,
        price_per_million_connection_minutes_usd: 0,
        meter_interval_seconds: 1,
      },
    },
  });
  const a = await activate(app);
  const start = await app.svc.wallet.balance(a.account_id);
  const publish = () =>
    app.inject({
      method: 'POST',
      url: '/v1/realtime/publish',
      payload: { channel: 'news', event: 'e', data: 1 },
      headers: a.auth,
    });
  const tok = (await app.inject({ method: 'POST', url: '/v1/realtime/token', payload: {}, headers: a.auth })).json();
  const c = await NativeClient.open(tok.endpoint, tok.token);
  t.teardown(() => c.close());
  await c.ask({ type: 'subscribe', channel: 'news', id: '1' });
  const r = await publish();
  t.equal(r.statusCode, 200);
  await c.next((f) => f.type === 'message');
  // One USD a message: the publish and the one copy delivered.
  await until('the meter charged', async () => (await app.svc.wallet.balance(a.account_id)) <= start - 2_000_000);
  t.equal(await app.svc.wallet.balance(a.account_id), start - 2_000_000);
  const rows = await app.svc.db
    .selectFrom('wallet_ledger')
    .selectAll()
    .where('account_id', '=', a.account_id)
    .where('kind', '=', 'usage')
    .execute();
  t.ok(rows.length >= 1, 'ledger usage rows');

  // With the balance spent, the API refuses to publish.
  await app.svc.wallet.debit(a.account_id, await app.svc.wallet.balance(a.account_id), 'usage', 'drain');
  const spent = await publish();
  t.equal(spent.statusCode, 402);
});
