import type { Kysely, Migration } from 'kysely';
import type { CoreConfig } from '../../config/schema.js';
import { coreMigrations } from '../../core/db/core-migrations.js';
import { loadAreas } from '../../core/plugin-loader.js';

export interface MigrationModule {
  name: string;
  migrations: Record<string, Migration>;
}

/** The core's migrations and those of every area the config turns on, in the order serve applies them. */
export async function migrationModules(config: CoreConfig, baseDir: string): Promise<MigrationModule[]> {
  const areas = await loadAreas(config, baseDir);
  return [{ name: 'core', migrations: coreMigrations }, ...areas.filter((a) => a.def.migrations).map((a) => ({ name: a.def.name, migrations: a.def.migrations! }))];
}

/**
 * Names of a module's migrations not yet applied. Reads the module's record table through
 * the connection's search path (as core/db/migrate.ts names it), so on PostgreSQL it sees only
 * the configured schema; a missing table means nothing was applied. Changes nothing.
 */
export async function pendingMigrations(db: Kysely<any>, mod: MigrationModule): Promise<string[]> {
  const table = `svc_migrations_${mod.name.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}`;
  let applied = new Set<string>();
  try {
    const rows = await db.selectFrom(table).select('name').execute();
    applied = new Set(rows.map((r) => String(r.name)));
  } catch (e) {
    if (!/does not exist|no such table/i.test((e as Error).message)) throw e;
  }
  return Object.keys(mod.migrations).sort().filter((n) => !applied.has(n));
}
