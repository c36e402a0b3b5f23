import t from 'tap';
import { makeApp, activate } from '../../helpers/app.js';
import { UsageMeter } from '../../../plugins/storage/usage.js';

t.test(
  'the meter batches changes in memory, counts them in the caps at once, and writes them before any read',
  async (t) => {
    const { app } = await makeApp(t, { vendors: [] });
    const a = await activate(app);
    const config = {
      max_object_bytes: 5000,
      tier_caps: { free: { max_object_bytes: 1000, max_total_bytes: 2500 } },
    } as any;
    const meter = new UsageMeter(app.svc.db, config, 60_000);
    const row = () =>
      app.svc.db
        .selectFrom('storage_usage')
        .select(['bytes_stored', 'bytes_served'])
        .where('account_id', '=', a.account_id)
        .executeTakeFirst();

    t.equal((await meter.limits(a.account_id)).stored, 0);
    meter.stored(a.account_id, 700);
    meter.stored(a.account_id, 300);
    meter.served(a.account_id, 40);
    t.equal(await row(), undefined, 'nothing written per change');
    t.match(
      await meter.limits(a.account_id),
      { caps: { tier: 'free', maxObjectBytes: 1000, maxTotalBytes: 2500 }, stored: 1000 },
      'the caps see the changes before they are written'
    );
    t.same(
      await meter.get(a.account_id),
      { bytes_stored: 1000, bytes_served: 40 },
      'reading the usage writes the batch'
    );
    t.same(await row(), { bytes_stored: 1000, bytes_served: 40 });

    meter.stored(a.account_id, -1200);
    t.same(await meter.get(a.account_id), { bytes_stored: 0, bytes_served: 40 }, 'read as never below zero');
    t.equal((await new UsageMeter(app.svc.db, config).limits(a.account_id)).stored, 0);
    // A fresh meter (another node, or after a restart) reads what was written.
    const other = new UsageMeter(app.svc.db, config, 60_000);
    meter.stored(a.account_id, 700);
    t.equal((await other.limits(a.account_id)).stored, 0, "another node's unwritten changes are not seen");
    await meter.flush();
    t.equal(
      (await new UsageMeter(app.svc.db, config).limits(a.account_id)).stored,
      500,
      'the sum as written: 1000 - 1200 + 700'
    );
  }
);

t.test('two nodes: a decrease written before the increase it undoes is not lost', async (t) => {
  const { app } = await makeApp(t, { vendors: [] });
  const a = await activate(app);
  const config = { max_object_bytes: 5000, tier_caps: {} } as any;
  const uploader = new UsageMeter(app.svc.db, config, 60_000);
  const deleter = new UsageMeter(app.svc.db, config, 60_000);
  uploader.stored(a.account_id, 300); // node A stores an object; its meter has not flushed yet
  deleter.stored(a.account_id, -300); // node B deletes it and flushes first
  await deleter.flush();
  t.equal((await deleter.get(a.account_id)).bytes_stored, 0, 'read as 0 meanwhile');
  await uploader.flush();
  t.equal((await uploader.get(a.account_id)).bytes_stored, 0, 'nothing is stored once both are written');
});
