import type { Kysely, Migration } from 'kysely';

const tunnels: Migration = {
  async up(db: Kysely<any>) {
    // account_id null: an anonymous tunnel, reached by its token until an account claims it.
    // live_subdomain holds the name while the record may still serve it (null once expired), so
    // the unique index reserves a name for one live record while expired ones keep theirs to show.
    await db.schema
      .createTable('public_urls')
      .addColumn('url_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text')
      .addColumn('subdomain', 'text', (c) => c.notNull())
      .addColumn('live_subdomain', 'text', (c) => c.unique())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('port', 'integer')
      .addColumn('token_hash', 'text')
      .addColumn('client_ip', 'text')
      .addColumn('bytes_in', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('bytes_out', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('bytes_billed', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('public_urls_account')
      .on('public_urls')
      .columns(['account_id', 'created_at'])
      .execute();
    await db.schema.createIndex('public_urls_ip').on('public_urls').columns(['client_ip', 'created_at']).execute();
    // verified_domain: set while verified, so one domain routes to one account's tunnel only.
    await db.schema
      .createTable('public_url_domains')
      .addColumn('domain_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('domain', 'text', (c) => c.notNull())
      .addColumn('verified_domain', 'text', (c) => c.unique())
      .addColumn('url_id', 'text')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('challenge', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('checked_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('public_url_domains_account')
      .on('public_url_domains')
      .columns(['account_id', 'domain'])
      .unique()
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('public_url_domains').execute();
    await db.schema.dropTable('public_urls').execute();
  },
};

// The node holding a tunnel's client, so that another node forwards the tunnel's requests there.
const nodeUrl: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('public_urls').addColumn('node_url', 'text').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('public_urls').dropColumn('node_url').execute();
  },
};

export const publicUrlMigrations: Record<string, Migration> = { '0001_tunnels': tunnels, '0002_node_url': nodeUrl };
