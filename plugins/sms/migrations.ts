import type { Kysely, Migration } from 'kysely';

// Messages themselves are outbox records (core/outbox); the area keeps only its passcodes.
const otp: Migration = {
  async up(db: Kysely<any>) {
    // One row per account and number: its current passcode (hashed) and the counters of its limits.
    await db.schema
      .createTable('sms_otp')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('phone', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('code_hash', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('checks', 'integer', (c) => c.notNull())
      .addColumn('verified_at', 'bigint')
      .addColumn('last_sent_at', 'bigint', (c) => c.notNull())
      .addColumn('sends', 'integer', (c) => c.notNull())
      .addColumn('window_started_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('sms_otp_pk', ['account_id', 'phone'])
      .execute();
    // Retention removes rows whose passcode expired long ago.
    await db.schema.createIndex('sms_otp_expires').on('sms_otp').column('expires_at').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('sms_otp').execute();
  },
};

export const smsMigrations: Record<string, Migration> = { '0001_otp': otp };
