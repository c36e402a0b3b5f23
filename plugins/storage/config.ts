import { Type, type Static } from '@sinclair/typebox';

export const StorageConfigSchema = Type.Object(
  {
    s3_path: Type.String({
      pattern: '^/[a-z0-9/_-]*[a-z0-9_-]$',
      default: '/s3',
      description: "Path of the gateway's own S3-compatible endpoint (path-style).",
    }),
    region: Type.String({
      minLength: 1,
      default: 'us-east-1',
      description: 'Region the S3 endpoint names in its credentials and bucket locations.',
    }),
    presign_default_seconds: Type.Integer({ minimum: 1, maximum: 604800, default: 900 }),
    presign_through: Type.Union([Type.Literal('gateway'), Type.Literal('vendor')], {
      default: 'gateway',
      description:
        "Where the API's presigned GET and PUT URLs and POST forms point for buckets on s3 or minio: the gateway's own S3 endpoint (uploads capped and metered, the bytes pass the gateway), or the service itself (the gateway out of the data path; PUTs uncapped, transfers unmetered). local-storage buckets are always served by the gateway. The same holds for the URLs of results (generated images, audio, PDFs) written to an s3 or minio vendor.",
    }),
    max_object_bytes: Type.Integer({
      minimum: 1,
      default: 5 * 1024 ** 3,
      description: 'Largest object a single PUT may store (tiers without caps below).',
    }),
    tier_caps: Type.Record(
      Type.String(),
      Type.Object(
        {
          max_object_bytes: Type.Integer({ minimum: 1 }),
          max_total_bytes: Type.Integer({ minimum: 1 }),
        },
        { additionalProperties: false }
      ),
      {
        default: {
          free: { max_object_bytes: 1024 ** 3, max_total_bytes: 5 * 1024 ** 3 },
          pro: { max_object_bytes: 5 * 1024 ** 3, max_total_bytes: 100 * 1024 ** 3 },
        },
        description:
          'Per account tier: largest object and total bytes stored. Enforced while the upload streams (413 naming the cap).',
      }
    ),
    allow_inline_html: Type.Boolean({
      default: false,
      description: 'Serve HTML, SVG and XML from public buckets inline; otherwise always as attachments.',
    }),
    clock_skew_seconds: Type.Integer({
      minimum: 1,
      default: 900,
      description: 'How far x-amz-date may be from the gateway clock.',
    }),
    price_per_gib_month_usd: Type.Number({
      minimum: 0,
      default: 0,
      description: 'Charged for bytes stored, pro rata by the hour.',
    }),
    price_per_gib_served_usd: Type.Number({
      minimum: 0,
      default: 0,
      description: 'Charged for bytes served (GETs, public reads included).',
    }),
    billing_interval_seconds: Type.Integer({
      minimum: 10,
      default: 3600,
      description: 'How often stored and served bytes are charged to the wallet.',
    }),
    results_vendor: Type.String({
      default: '',
      description:
        'Storage vendor instance results (generated images, audio, PDFs…) are written to; default: the first that serves storage.',
    }),
    results_retention_seconds: Type.Integer({
      minimum: 60,
      default: 7 * 86400,
      description: 'How long results are kept before the retention sweep deletes them.',
    }),
    results_public: Type.Boolean({
      default: false,
      description:
        'Hand out results by unsigned URLs that work until the retention sweep deletes them (capability URLs: result ids are random); otherwise by signed URLs.',
    }),
    results_public_base_url: Type.String({
      default: '',
      pattern: '^(https?://.+[^/])?$',
      description:
        "Public results: where the results vendor's objects are served without a signature (a public bucket, a CDN), followed by the object path. Required for s3 and minio; for local-storage it replaces the gateway's own S3 endpoint URL.",
    }),
    multipart_expire_seconds: Type.Integer({
      minimum: 60,
      default: 7 * 86400,
      description:
        "How long a multipart upload may stay unfinished (S3's AbortIncompleteMultipartUpload): older uploads are dropped with their parts by a sweep (at start, then every quarter of this, at most hourly), and answer NoSuchUpload. Completed uploads are remembered this long, so that a repeated CompleteMultipartUpload gets the same answer.",
    }),
    transfer_timeout_ms: Type.Integer({
      minimum: 1000,
      default: 3600000,
      description: 'Longest a single upload or download may take.',
    }),
    cors_default: Type.Object(
      {
        allowed_origins: Type.Array(Type.String({ minLength: 1, pattern: '^[^*]*\\*?[^*]*$' }), {
          default: ['*'],
          description:
            'Origins (one `*` wildcard each) whose pages may use the S3 endpoint on buckets without a CORS configuration of their own; [] turns the default off.',
        }),
        allowed_methods: Type.Array(Type.Union(['GET', 'PUT', 'HEAD', 'POST', 'DELETE'].map((m) => Type.Literal(m))), {
          default: ['GET', 'PUT', 'HEAD', 'POST', 'DELETE'],
          minItems: 1,
        }),
        allowed_headers: Type.Array(Type.String({ minLength: 1, pattern: '^[^*]*\\*?[^*]*$' }), {
          default: ['*'],
          description: 'Request headers a preflight may ask for (one `*` wildcard each).',
        }),
        expose_headers: Type.Array(Type.String({ minLength: 1, pattern: '^[^*]+$' }), {
          default: [
            'ETag',
            'Content-Range',
            'Accept-Ranges',
            'Content-Disposition',
            'Content-Encoding',
            'x-amz-request-id',
            'x-amz-checksum-crc32',
            'x-amz-checksum-crc32c',
            'x-amz-checksum-sha1',
            'x-amz-checksum-sha256',
          ],
          description: 'Response headers a page may read (ETag: browser multipart uploads need it).',
        }),
        max_age_seconds: Type.Integer({
          minimum: 0,
          default: 3600,
          description: 'How long a browser may cache a preflight answer.',
        }),
      },
      {
        additionalProperties: false,
        default: {},
        description:
          'The CORS rule of buckets that have no CORS configuration (PutBucketCors) of their own. By default any origin may use a presigned URL or POST form: the signature is the credential, as with MinIO.',
      }
    ),
  },
  { additionalProperties: false, default: {} }
);

export type StorageConfig = Static<typeof StorageConfigSchema>;
