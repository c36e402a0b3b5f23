import type { Kysely, Migration } from 'kysely';

const init: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('storage_buckets')
      .addColumn('bucket_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('vendor', 'text', (c) => c.notNull())
      .addColumn('region', 'text', (c) => c.notNull())
      .addColumn('acl', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('storage_buckets_account_name', ['account_id', 'name'])
      .execute();
    await db.schema
      .createIndex('storage_buckets_account_created')
      .on('storage_buckets')
      .columns(['account_id', 'created_at'])
      .execute();
    // S3 access keys of an account. The secret is needed to verify SigV4, so it is kept
    // encrypted (AES-256-GCM under a key derived from the master key), not hashed.
    await db.schema
      .createTable('storage_credentials')
      .addColumn('access_key_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull()) // 'user' | 'internal' (signs the API's presigned URLs)
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('secret_enc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('storage_credentials_account')
      .on('storage_credentials')
      .columns(['account_id', 'kind'])
      .execute();
  },
};

// Bytes stored and served per account, kept as objects come and go (metering and caps).
const usage: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('storage_usage')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('bytes_stored', 'bigint', (c) => c.notNull())
      .addColumn('bytes_served', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};

// What has been charged so far: served bytes up to a counter value, stored bytes up to a time.
const billing: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('storage_usage')
      .addColumn('served_billed', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('storage_usage')
      .addColumn('billed_at', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};

// Multipart uploads of the S3 endpoint: the upload, and each part received (its bytes are an
// object in the hidden uploads bucket on the target bucket's vendor).
const multipart: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('storage_multipart_uploads')
      .addColumn('upload_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('bucket_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('storage_multipart_uploads_bucket')
      .on('storage_multipart_uploads')
      .columns(['bucket_id', 'key'])
      .execute();
    await db.schema
      .createTable('storage_multipart_parts')
      .addColumn('upload_id', 'text', (c) => c.notNull())
      .addColumn('part_number', 'integer', (c) => c.notNull())
      .addColumn('etag', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('storage_multipart_parts_pk', ['upload_id', 'part_number'])
      .execute();
  },
};

// Expiry of unfinished multipart uploads: the sweep looks them up by age, and claims each one
// for a while (expiry_claimed_at) so that nodes sweeping at once do not drop it twice.
const multipartExpiry: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('storage_multipart_uploads').addColumn('expiry_claimed_at', 'bigint').execute();
    await db.schema
      .createIndex('storage_multipart_uploads_created')
      .on('storage_multipart_uploads')
      .column('created_at')
      .execute();
  },
};

// A bucket's CORS configuration (PutBucketCors): its rules as the JSON of the parsed XML.
const bucketCors: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('storage_bucket_cors')
      .addColumn('bucket_id', 'text', (c) => c.primaryKey())
      .addColumn('rules', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};

// Completed multipart uploads, remembered until the expiry so that a repeated completion (an
// SDK retry after a lost response) is answered as the first was.
const multipartCompleted: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('storage_multipart_completed')
      .addColumn('upload_id', 'text', (c) => c.primaryKey())
      .addColumn('bucket_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('parts', 'text', (c) => c.notNull())
      .addColumn('etag', 'text', (c) => c.notNull())
      .addColumn('completed_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('storage_multipart_completed_at')
      .on('storage_multipart_completed')
      .column('completed_at')
      .execute();
    await db.schema
      .createIndex('storage_multipart_completed_bucket')
      .on('storage_multipart_completed')
      .column('bucket_id')
      .execute();
  },
};

export const storageMigrations: Record<string, Migration> = {
  '0001_init': init,
  '0002_usage': usage,
  '0003_billing': billing,
  '0004_multipart': multipart,
  '0005_multipart_expiry': multipartExpiry,
  '0006_bucket_cors': bucketCors,
  '0007_multipart_completed': multipartCompleted,
};
