import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely, Migration } from 'kysely';
import { openDatabase } from '../../../core/db/open.js';
import { migrateModule } from '../../../core/db/migrate.js';
import { freshDatabaseUrl } from '../../helpers/app.js';

const migrations: Record<string, Migration> = {
  '0001_a': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('mig_a').addColumn('id', 'text').execute();
    },
  },
  '0002_b': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('mig_b').addColumn('id', 'text').execute();
    },
  },
};

t.test('two connections migrating at once apply each migration once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mig-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = await freshDatabaseUrl(t, dir);
  const one = await openDatabase(url);
  const two = await openDatabase(url);
  t.teardown(async () => {
    await one.close();
    await two.close();
  });
  // better-sqlite3 is synchronous: two connections of one process cannot wait for each other
  // (the waiting one blocks the event loop), so on SQLite the second runs after the first.
  // Across processes BEGIN IMMEDIATE makes the second wait for the first.
  const [a, b] =
    one.dialect === 'postgres'
      ? await Promise.all([migrateModule(one, 'test', migrations), migrateModule(two, 'test', migrations)])
      : [await migrateModule(one, 'test', migrations), await migrateModule(two, 'test', migrations)];
  t.same([...a, ...b].sort(), ['test/0001_a', 'test/0002_b']);
  t.same(await migrateModule(one, 'test', migrations), [], 'nothing the second time');
  const later = await migrateModule(one, 'test', {
    ...migrations,
    '0003_c': {
      async up(db: Kysely<any>) {
        await db.schema.createTable('mig_c').addColumn('id', 'text').execute();
      },
    },
  });
  t.same(later, ['test/0003_c']);
  const failed = await migrateModule(one, 'other', migrations).then(
    () => 'no error',
    (e: Error) => e.message
  );
  t.match(failed, /^migration other\/0001_a failed: .*mig_a.* already exists/, 'a failing migration names itself');
});
