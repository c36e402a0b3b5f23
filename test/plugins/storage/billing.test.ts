import t from 'tap';
import { activate } from './helpers.js';
import { listeningApp } from '../../helpers/listening-app.js';
import { createBucket, presign } from '../../helpers/storage-api.js';
import { StorageBilling } from '../../../plugins/storage/billing.js';

const MIB = 1024 * 1024;

t.test('stored and served bytes are charged to the wallet once, at the configured prices', async (t) => {
  const storage = { price_per_gib_month_usd: 30, price_per_gib_served_usd: 1024 }; // round numbers for 1 MiB
  // Local storage only: uploads through a remote S3 service's presigned URLs bypass the meters.
  const { app } = await listeningApp(t, { vendors: [], plugins: { storage } });
  const a = await activate(app);
  await createBucket(app, a, 'billed');
  const put = (await presign(app, a, 'billed', 'one-mib', { method: 'PUT' })).json();
  t.equal((await fetch(put.url, { method: 'PUT', body: Buffer.alloc(MIB, 1) })).status, 200);
  const get = (await presign(app, a, 'billed', 'one-mib', { method: 'GET' })).json();
  await (await fetch(get.url)).arrayBuffer();

  const cfg = app.svc.areas.find((x) => x.def.name === 'storage')!.config as any;
  const billing = new StorageBilling(app.svc.db, app.svc.wallet, cfg, app.svc.log);
  // Served bytes are written in batches; reading the usage writes this node's batch.
  t.equal((await app.inject({ method: 'GET', url: '/v1/storage/usage', headers: a.auth })).json().bytes_served, MIB);
  const row = await app.svc.db
    .selectFrom('storage_usage')
    .selectAll()
    .where('account_id', '=', a.account_id)
    .executeTakeFirstOrThrow();
  const day = 86_400_000;
  const now = Number(row.billed_at) + day;
  // served: 1 MiB at 1024 USD/GiB = 1 USD; stored: 1 MiB for a day at 30 USD/GiB-month = 1/1024 USD.
  const expected = 1_000_000 + Math.floor(1_000_000 / 1024);
  const before = await app.svc.wallet.balance(a.account_id);
  t.equal(await billing.run(now), expected);
  t.equal(before - (await app.svc.wallet.balance(a.account_id)), expected);
  t.equal(await billing.run(now), 0, 'nothing twice');
  const [first, second] = await Promise.all([billing.run(now + day), billing.run(now + day)]);
  t.equal(first + second, Math.floor(1_000_000 / 1024), 'two runs at once charge once');
  const ledger = await app.svc.db
    .selectFrom('wallet_ledger')
    .select(['amount_micros', 'capability'])
    .where('account_id', '=', a.account_id)
    .where('kind', '=', 'usage')
    .execute();
  t.same(
    ledger.map((l) => [Number(l.amount_micros), l.capability]),
    [
      [-expected, 'storage'],
      [-Math.floor(1_000_000 / 1024), 'storage'],
    ]
  );
});

t.test('no prices, no charges', async (t) => {
  const { app } = await listeningApp(t, { vendors: [] });
  const cfg = app.svc.areas.find((x) => x.def.name === 'storage')!.config as any;
  const billing = new StorageBilling(app.svc.db, app.svc.wallet, cfg, app.svc.log);
  t.equal(billing.priced, false);
  t.equal(await billing.run(), 0);
});
