import type { Kysely, Migration } from 'kysely';

const base: Migration = {
  async up(db: Kysely<any>) {
    // Channels an account declared; a channel never declared is typed by its name's prefix.
    await db.schema
      .createTable('realtime_channels')
      .addColumn('channel_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('realtime_channels_name', ['account_id', 'name'])
      .execute();
    // The Pusher app of an account: the key names it on sockets, the secret (sealed) signs.
    await db.schema
      .createTable('realtime_apps')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().unique())
      .addColumn('app_key', 'text', (c) => c.notNull().unique())
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    // The short history a resuming client reads; rows older than the window are swept.
    await db.schema
      .createTable('realtime_messages')
      .addColumn('message_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('realtime_messages_channel')
      .on('realtime_messages')
      .columns(['account_id', 'channel', 'created_at'])
      .execute();
    await db.schema.createIndex('realtime_messages_created').on('realtime_messages').column('created_at').execute();
    // Presence members, one row a socket; its node refreshes seen_at, so a dead node's rows go stale.
    await db.schema
      .createTable('realtime_presence')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('user_info', 'text')
      .addColumn('node_id', 'text', (c) => c.notNull())
      .addColumn('seen_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('realtime_presence_pk', ['account_id', 'channel', 'client_id'])
      .execute();
    await db.schema.createIndex('realtime_presence_node').on('realtime_presence').column('node_id').execute();
    await db.schema.createIndex('realtime_presence_seen').on('realtime_presence').column('seen_at').execute();
  },
  async down(db: Kysely<any>) {
    for (const t of ['realtime_presence', 'realtime_messages', 'realtime_apps', 'realtime_channels'])
      await db.schema.dropTable(t).execute();
  },
};

export const realtimeMigrations: Record<string, Migration> = { '0001_realtime': base };
