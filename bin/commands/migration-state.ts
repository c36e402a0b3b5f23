import type { Kysely, Migration } from 'kysely';
import type { CoreConfig } from '../../config/schema.js';
import { coreModules } from '../../core/db/core-modules.js';
import { loadAreas } from '../../core/plugin-loader.js';
import { pendingMigrations as pendingFor } from '../../core/db/migrate.js';

export interface MigrationModule {
  name: string;
  migrations: Record<string, Migration>;
}

/** The core's migrations and those of every area the config turns on, in the order serve applies them. */
export async function migrationModules(config: CoreConfig, baseDir: string): Promise<MigrationModule[]> {
  const areas = await loadAreas(config, baseDir);
  return [
    ...coreModules,
    ...areas.filter((a) => a.def.migrations).map((a) => ({ name: a.def.name, migrations: a.def.migrations! })),
  ];
}

/** Names of a module's migrations not yet applied; changes nothing. */
export async function pendingMigrations(db: Kysely<any>, mod: MigrationModule): Promise<string[]> {
  return pendingFor(db, mod.name, mod.migrations);
}
