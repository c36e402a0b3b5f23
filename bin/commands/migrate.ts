import { CONFIG_OPTION, configFromFlags, out, type Command } from './command.js';

/** Apply the core's and every enabled area's migrations, without starting the gateway. */
export const migrateCommand: Command = {
  name: 'migrate',
  summary: "apply the database migrations of the core and the config's areas",
  help: `Usage: svc-gateway migrate [--config FILE]

Opens the database named by the config (database.url, or SVC_DATABASE_URL) and applies the
core's migrations and those of every area the config turns on, printing each one applied.
serve does the same at boot; run this first when several nodes share one database.
`,
  options: { ...CONFIG_OPTION },
  async run(flags) {
    const [{ openDatabase }, { migrateModule }, { migrationModules }] = await Promise.all([
      import('../../core/db/open.js'),
      import('../../core/db/migrate.js'),
      import('./migration-state.js'),
    ]);
    const { config, baseDir } = await configFromFlags(flags);
    const modules = await migrationModules(config, baseDir);
    const database = await openDatabase(config.database.url, { poolSize: 1 });
    try {
      const applied: string[] = [];
      for (const m of modules) applied.push(...(await migrateModule(database, m.name, m.migrations)));
      for (const a of applied) out(`applied ${a}`);
      out(
        applied.length
          ? `${applied.length} migration${applied.length === 1 ? '' : 's'} applied (${database.dialect}).`
          : `The database is up to date: nothing to apply (${database.dialect}, ${modules.length} modules).`
      );
      return 0;
    } finally {
      await database.close();
    }
  },
};
