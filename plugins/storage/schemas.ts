import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, Page, IdempotencyKey } from '../../core/kit/area.js';

// The Storage area's wire, stated once.

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });
const Acl = Type.Union([Type.Literal('private'), Type.Literal('public')], {
  description: '`public` buckets serve GET without a signature.',
});
const BucketName = Type.String({
  minLength: 3,
  maxLength: 63,
  description: 'S3 bucket naming rules; unique within the account.',
});

export const CreateBucketBody = Type.Object(
  {
    bucket: BucketName,
    vendor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Vendor instance to keep the bucket on; default: the first that serves storage.',
      })
    ),
    region: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          "A label stored and echoed; no vendor places the bucket by it. Default: the vendor's (`local`, or an s3/minio instance's configured region).",
      })
    ),
    acl: Type.Optional(Acl),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);

export const Bucket = Type.Object({
  bucket: Type.String(),
  vendor: Type.String(),
  region: Type.String(),
  created_at: Timestamp,
  acl: Type.Optional(Acl),
});

export const BucketList = Page(Bucket);

export const BucketParams = Type.Object(
  { bucket: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false }
);
export const KeyParamsSchema = Type.Object(
  {
    bucket: Type.String({ minLength: 1, maxLength: 255 }),
    key: Type.String({ minLength: 1, description: 'Object key; "/" may be sent as %2F.' }),
  },
  { additionalProperties: false }
);

export const PresignBody = Type.Object(
  {
    method: Type.Optional(
      Type.Union([Type.Literal('GET'), Type.Literal('PUT'), Type.Literal('POST')], {
        default: 'PUT',
        description:
          'The HTTP method the URL authorizes. POST: a browser form upload whose size cap the vendor enforces (s3 and minio buckets only); the answer carries `fields`.',
      })
    ),
    expires_seconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 604800, description: 'Lifetime of the URL: 1 s to 7 days, default 900.' })
    ),
  },
  { additionalProperties: false }
);

export const PresignedUrl = Type.Object({
  url: Type.String(),
  method: Type.Union([Type.Literal('GET'), Type.Literal('PUT'), Type.Literal('POST')]),
  expires_at: Timestamp,
  headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Headers the request must carry.' })),
  fields: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description:
        'POST only: form fields to send (multipart/form-data) before the file, which goes last in a field named "file". A "Content-Type" field sets the object\'s type.',
    })
  ),
  max_bytes: Type.Optional(
    Type.Integer({
      description:
        'POST only: the largest file the vendor accepts with this form (the tier cap at the time of the call).',
    })
  ),
});

export const ObjectMeta = Type.Object({
  key: Type.String(),
  size: Type.Integer(),
  etag: Type.String(),
  content_type: Type.String(),
  last_modified: Timestamp,
});

export const ObjectListItem = Type.Object({
  ...ObjectMeta.properties,
  content_type: Type.Optional(
    Type.String({
      description:
        "Left out where the vendor's listing does not say it (s3, minio buckets); a HEAD of the object gives it.",
    })
  ),
});

export const ObjectListQuery = Type.Object(
  {
    prefix: Type.Optional(Type.String({ maxLength: 1024, default: '' })),
    limit: ListQuery.properties.limit, // as every list; the S3 endpoint's max-keys stays S3's 1,000
    cursor: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false }
);

export const ObjectList = Page(ObjectListItem);

export const CreateCredentialBody = Type.Object(
  {
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: 's3' })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);

export const Credential = Type.Object({
  access_key_id: Type.String(),
  label: Type.String(),
  created_at: Timestamp,
});

export const CreatedCredential = Type.Intersect([
  Credential,
  Type.Object({
    secret_access_key: Type.String({
      description: 'Shown once per credential: a replay with the same idempotency key returns the same secret.',
    }),
    endpoint: Type.String({ description: 'S3 endpoint for path-style clients (forcePathStyle).' }),
    region: Type.String(),
  }),
]);

export const CredentialList = Page(Credential);

export const StorageUsage = Type.Object({
  tier: Type.String(),
  bytes_stored: Type.Integer(),
  bytes_served: Type.Integer({ description: 'Since the account was created.' }),
  max_object_bytes: Type.Integer(),
  max_total_bytes: Type.Union([Type.Integer(), Type.Null()]),
});

export type CreateBucketBodyT = Static<typeof CreateBucketBody>;
export type PresignBodyT = Static<typeof PresignBody>;
export type ObjectListQueryT = Static<typeof ObjectListQuery>;
export type CreateCredentialBodyT = Static<typeof CreateCredentialBody>;
