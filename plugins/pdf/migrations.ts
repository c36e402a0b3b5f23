import type { Kysely, Migration } from 'kysely';

const templates: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('pdf_templates')
      .addColumn('template_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('html', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    // The list is per account, newest first; a lookup by id is always with its account.
    await db.schema
      .createIndex('pdf_templates_account')
      .on('pdf_templates')
      .columns(['account_id', 'created_at', 'template_id'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('pdf_templates').execute();
  },
};

export const pdfMigrations: Record<string, Migration> = { '0001_templates': templates };
