import { Type, type Static } from '@sinclair/typebox';

// The public URL wire, the single source of validation, serialization, OpenAPI and discovery.

export const PUBLIC_URL_STATES = ['waiting', 'connected', 'disconnected', 'expired'] as const;
export type PublicUrlState = (typeof PUBLIC_URL_STATES)[number];

export const SUBDOMAIN_PATTERN = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';

const IdempotencyKey = Type.Optional(Type.String({ minLength: 1, maxLength: 255 }));

export const CreateBody = Type.Object(
  {
    subdomain: Type.Optional(
      Type.String({
        pattern: SUBDOMAIN_PATTERN,
        description: 'One DNS label (a-z, 0-9, -); random when absent. Yours again when you ask for it again.',
        examples: ['my-app'],
      })
    ),
    port: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 65535, description: 'Local port the tunnel client exposes (informative).' })
    ),
    ttl_seconds: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 604800, description: 'Lifetime, 60 s to 7 days (default 8 h).' })
    ),
    idempotency_key: IdempotencyKey,
  },
  { additionalProperties: false, examples: [{ subdomain: 'my-app', port: 3000 }] }
);
export type CreateBodyT = Static<typeof CreateBody>;

export const AnonymousBody = Type.Object(
  {
    port: CreateBody.properties.port,
    ttl_seconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: 604800,
        description: 'Capped by plugins.public-url.anonymous.max_ttl_seconds.',
      })
    ),
  },
  { additionalProperties: false }
);
export type AnonymousBodyT = Static<typeof AnonymousBody>;

export const PublicUrlRecord = Type.Object({
  url_id: Type.String(),
  url: Type.String({ description: 'Where the public reaches the tunnel.' }),
  subdomain: Type.String(),
  state: Type.Union(PUBLIC_URL_STATES.map((s) => Type.Literal(s))),
  port: Type.Union([Type.Integer(), Type.Null()]),
  anonymous: Type.Boolean({ description: 'Created without an account; POST /v1/public-url/{id}/claim takes it.' }),
  connect_url: Type.String({ description: 'WebSocket the tunnel client connects to (docs/public-url.md).' }),
  bytes_in: Type.Integer({ description: 'Request bytes carried to the tunnel client.' }),
  bytes_out: Type.Integer({ description: 'Response bytes carried back.' }),
  expires_at: Type.String(),
  created_at: Type.String(),
});
export type PublicUrlRecordT = Static<typeof PublicUrlRecord>;

export const AnonymousRecord = Type.Composite([
  PublicUrlRecord,
  Type.Object({
    token: Type.String({ description: 'Connects the tunnel client (Authorization: Bearer). Shown once.' }),
  }),
]);

export const PublicUrlList = Type.Object({
  items: Type.Array(PublicUrlRecord),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const DomainBody = Type.Object(
  {
    domain: Type.String({ minLength: 3, maxLength: 253, description: 'A name you control, e.g. app.example.com.' }),
    url_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'The tunnel it serves once verified.' })
    ),
    idempotency_key: IdempotencyKey,
  },
  { additionalProperties: false, examples: [{ domain: 'app.example.com', url_id: 'url_…' }] }
);
export type DomainBodyT = Static<typeof DomainBody>;

export const DnsRecord = Type.Object({ type: Type.String(), name: Type.String(), value: Type.String() });

export const DomainRecord = Type.Object({
  domain_id: Type.String(),
  domain: Type.String(),
  url_id: Type.Optional(Type.String()),
  state: Type.Union([Type.Literal('pending'), Type.Literal('verified'), Type.Literal('failed')]),
  records: Type.Array(DnsRecord, { description: 'Publish these; POST …/domains/{id}/verify looks them up.' }),
  created_at: Type.String(),
});
export type DomainRecordT = Static<typeof DomainRecord>;

export const DomainList = Type.Object({
  items: Type.Array(DomainRecord),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
