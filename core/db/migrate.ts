import { Migrator, type Kysely, type Migration } from 'kysely';

/**
 * Apply one module's in-code migrations, recorded in its own table, so areas (and
 * third-party plugins) never collide on migration names or ordering.
 */
export async function migrateModule(db: Kysely<any>, module: string, migrations: Record<string, Migration>, schema?: string): Promise<string[]> {
  const safe = module.replace(/[^a-z0-9]+/gi, '_').toLowerCase();
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: `svc_migrations_${safe}`,
    migrationLockTableName: `svc_migrations_${safe}_lock`,
    // Kysely otherwise looks for its tables in every schema, so a second gateway (or test)
    // in another schema of the same database would make this one skip creating them.
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${module}/${failed ?? '?'} failed: ${(error as Error).message ?? error}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => `${module}/${r.migrationName}`);
}
