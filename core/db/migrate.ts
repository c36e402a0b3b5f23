import { Migrator, PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * Apply one module's in-code migrations, recorded in its own table, so areas (and
 * third-party plugins) never collide on migration names or ordering.
 */
export async function migrateModule(db: Kysely<any>, module: string, migrations: Record<string, Migration>): Promise<string[]> {
  const safe = module.replace(/[^a-z0-9]+/gi, '_').toLowerCase();
  // Kysely looks for its tables by name in every schema unless told which: with several
  // gateways (or test runs) in one database it would find another schema's and skip its own.
  const schema = db.getExecutor().adapter instanceof PostgresAdapter
    ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
    : undefined;
  const migrator = new Migrator({
    db,
    ...(schema ? { migrationTableSchema: schema } : {}),
    provider: { getMigrations: async () => migrations },
    migrationTableName: `svc_migrations_${safe}`,
    migrationLockTableName: `svc_migrations_${safe}_lock`,
  });
  // Kysely checks for its tables by listing every table in the database; when another
  // gateway or test run drops a schema at that moment the listing itself can fail with
  // "does not exist". Nothing has run then (no migration is named), so trying again is safe.
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => `${module}/${r.migrationName}`);
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    const message = (error as Error).message ?? String(error);
    if (!failed && attempt < 5 && /does not exist/.test(message)) {
      await new Promise((r) => setTimeout(r, 50 * attempt));
      continue;
    }
    throw new Error(`migration ${module}/${failed ?? '?'} failed: ${message}`);
  }
}
