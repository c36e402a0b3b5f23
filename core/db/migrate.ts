import { sql, type Kysely, type Migration, type Transaction } from 'kysely';
import type { Database } from './open.js';

// Our own small migrator rather than Kysely's: Kysely's introspects every table of every
// schema to decide whether its bookkeeping tables exist, which races with other gateways
// (or test runs) creating and dropping schemas in the same PostgreSQL database. Here the
// bookkeeping is one table in the current schema, and the whole run for a module is one
// transaction holding a lock, so two nodes starting at once apply each migration once.

const TABLE = 'svc_migrations';

async function ensureTable(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable(TABLE)
    .ifNotExists()
    .addColumn('module', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${TABLE}_pk`, ['module', 'name'])
    .execute()
    .catch(async (e) => {
      // Two PostgreSQL sessions racing on CREATE TABLE IF NOT EXISTS: one gets a unique
      // violation on the catalog. The table exists either way.
      const exists = await sql`select 1 from ${sql.table(TABLE)} limit 1`.execute(db).then(
        () => true,
        () => false
      );
      if (!exists) throw e;
    });
}

/** Apply one module's in-code migrations in name order, once each; returns what was applied. */
export async function migrateModule(
  database: Database,
  module: string,
  migrations: Record<string, Migration>
): Promise<string[]> {
  const { db } = database;
  await ensureTable(db);
  const names = Object.keys(migrations).sort();
  const run = async (trx: Kysely<any> | Transaction<any>) => {
    const done = new Set(
      (await trx.selectFrom(TABLE).select('name').where('module', '=', module).execute()).map((r) => r.name as string)
    );
    const applied: string[] = [];
    for (const name of names) {
      if (done.has(name)) continue;
      try {
        await migrations[name].up(trx);
      } catch (e) {
        throw new Error(`migration ${module}/${name} failed: ${(e as Error).message}`);
      }
      await trx.insertInto(TABLE).values({ module, name, applied_at: Date.now() }).execute();
      applied.push(`${module}/${name}`);
    }
    return applied;
  };
  if (database.dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
      // Serialise migrators of this schema and module across processes until commit.
      await sql`select pg_advisory_xact_lock(hashtext(${`${database.schema}/${module}`}))`.execute(trx);
      return run(trx);
    });
  }
  // SQLite: BEGIN IMMEDIATE takes the write lock before reading what is applied, so a second
  // process waits (busy_timeout) instead of failing to upgrade a stale read.
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const applied = await run(conn);
      await sql`commit`.execute(conn);
      return applied;
    } catch (e) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw e;
    }
  });
}

/** Names of a module's migrations not applied yet (doctor); a missing table means none were. Changes nothing. */
export async function pendingMigrations(
  db: Kysely<any>,
  module: string,
  migrations: Record<string, Migration>
): Promise<string[]> {
  let applied = new Set<string>();
  try {
    const rows = await db.selectFrom(TABLE).select('name').where('module', '=', module).execute();
    applied = new Set(rows.map((r) => String(r.name)));
  } catch (e) {
    if (!/does not exist|no such table/i.test((e as Error).message)) throw e;
  }
  return Object.keys(migrations)
    .sort()
    .filter((n) => !applied.has(n));
}
