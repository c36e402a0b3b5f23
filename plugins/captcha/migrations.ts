import type { Kysely, Migration } from 'kysely';

const siteKeys: Migration = {
  async up(db: Kysely<any>) {
    // An account's site keys: public ids the widget names, with its checks and vendor secrets (sealed).
    await db.schema
      .createTable('captcha_site_keys')
      .addColumn('site_key_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('allowed_hostnames', 'text', (c) => c.notNull())
      .addColumn('difficulty', 'integer', (c) => c.notNull())
      .addColumn('expected_action', 'text')
      .addColumn('min_score', 'real')
      // JSON of { vendor: { site_key, secret: sealed } }.
      .addColumn('vendors', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('captcha_site_keys_account')
      .on('captcha_site_keys')
      .columns(['account_id', 'created_at'])
      .execute();
    // Spent `service` solutions: the challenge is the key, so a second use conflicts on any node.
    await db.schema
      .createTable('captcha_spent')
      .addColumn('challenge', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('captcha_spent_expires').on('captcha_spent').column('expires_at').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('captcha_spent').execute();
    await db.schema.dropTable('captcha_site_keys').execute();
  },
};

export const captchaMigrations: Record<string, Migration> = { '0001_site_keys': siteKeys };
