import t from 'tap';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../../core/db/open.js';

// SQLite only: the WAL is cut back to journal_size_limit once a checkpoint has emptied it,
// instead of staying at its high-water mark.

t.test('the WAL file shrinks to the limit after a checkpoint', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-wal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.db');
  const limit = 128 * 1024;
  const database = await openDatabase(`sqlite:${file}`, { walLimitBytes: limit });
  t.teardown(() => database.close());
  const { db } = database;
  await sql`create table rows (id integer primary key, body text)`.execute(db);
  // A burst: about 2 MB of WAL in one transaction (below the checkpointer's worker threshold).
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < 1000; i++)
      await trx
        .insertInto('rows')
        .values({ body: 'x'.repeat(2000) })
        .execute();
  });
  const wal = () => statSync(`${file}-wal`).size;
  t.ok(wal() > 1024 * 1024, `the burst grew the WAL (${wal()} bytes)`);
  await sql`pragma wal_checkpoint(PASSIVE)`.execute(db);
  // The next commit starts the WAL over, and that is when it is cut back.
  await db.insertInto('rows').values({ body: 'y' }).execute();
  t.ok(wal() <= limit, `the WAL is back under the limit (${wal()} bytes)`);
  t.equal(
    Number((await sql<{ n: number }>`select count(*) as n from rows`.execute(db)).rows[0].n),
    1001,
    'nothing lost'
  );
});
