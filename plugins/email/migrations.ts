import type { Kysely, Migration } from 'kysely';

const initial: Migration = {
  async up(db: Kysely<any>) {
    // The messages themselves are outbox records (core/outbox): the area keeps what they are built from.
    await db.schema
      .createTable('email_domains')
      .addColumn('domain_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('domain', 'text', (c) => c.notNull())
      .addColumn('selector', 'text', (c) => c.notNull())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('private_key_sealed', 'text', (c) => c.notNull())
      .addColumn('verified_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('email_domains_account_domain')
      .unique()
      .on('email_domains')
      .columns(['account_id', 'domain'])
      .execute();

    await db.schema
      .createTable('email_suppressions')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('email_suppressions_pk', ['account_id', 'email'])
      .execute();

    await db.schema
      .createTable('email_templates')
      .addColumn('template_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('html', 'text')
      .addColumn('text', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('email_templates_account')
      .on('email_templates')
      .columns(['account_id', 'created_at', 'template_id'])
      .execute();
  },
  async down(db: Kysely<any>) {
    for (const t of ['email_templates', 'email_suppressions', 'email_domains']) await db.schema.dropTable(t).execute();
  },
};

export const emailMigrations: Record<string, Migration> = { '0001_initial': initial };
