import type { Migration } from 'kysely';
import { coreMigrations } from './core-migrations.js';
import { jobsMigrations } from '../jobs/migrations.js';
import { resultMigrations } from '../results/migrations.js';
import { retentionMigrations } from '../retention/migrations.js';
import { outboxMigrations } from '../outbox/migrations.js';

/** The core's own migration modules, applied in this order before any area's (serve, migrate, doctor). */
export const coreModules: { name: string; migrations: Record<string, Migration> }[] = [
  { name: 'core', migrations: coreMigrations },
  { name: 'jobs', migrations: jobsMigrations },
  { name: 'results', migrations: resultMigrations },
  { name: 'retention', migrations: retentionMigrations },
  { name: 'outbox', migrations: outboxMigrations },
];
