import { Type, type Static } from '@sinclair/typebox';

export const EMAIL_STATES = ['queued', 'sent', 'delivered', 'bounced', 'complained', 'failed', 'suppressed'] as const;
export type EmailState = (typeof EMAIL_STATES)[number];

const Addr = Type.String({
  minLength: 3,
  maxLength: 320,
  description: '`user@example.com` or `Name <user@example.com>`.',
  examples: ['ann@example.com'],
});
const AddrList = Type.Array(Addr, { maxItems: 1000 });

export const SendBody = Type.Object(
  {
    to: Type.Union([Addr, Type.Array(Addr, { minItems: 1, maxItems: 1000 })]),
    subject: Type.Optional(Type.String({ maxLength: 998, description: 'Required unless the template has one.' })),
    text: Type.Optional(Type.String()),
    html: Type.Optional(Type.String()),
    from: Type.Optional(Addr),
    reply_to: Type.Optional(Addr),
    cc: Type.Optional(AddrList),
    bcc: Type.Optional(AddrList),
    template_id: Type.Optional(Type.String({ maxLength: 64 })),
    template_vars: Type.Optional(Type.Record(Type.String(), Type.Any())),
    attachments: Type.Optional(
      Type.Array(
        Type.Object(
          {
            filename: Type.String({ minLength: 1, maxLength: 255 }),
            content: Type.String({ description: 'Base64.' }),
            mime: Type.Optional(Type.String({ maxLength: 255 })),
          },
          { additionalProperties: false }
        ),
        { maxItems: 1000 }
      )
    ),
    vendor: Type.Optional(Type.String({ maxLength: 100 })),
    idempotency_key: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false, examples: [{ to: 'ann@example.com', subject: 'Hello', text: 'Hi Ann' }] }
);
export type SendBodyT = Static<typeof SendBody>;

export const EmailRecord = Type.Object({
  id: Type.String(),
  state: Type.Union(EMAIL_STATES.map((s) => Type.Literal(s))),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  subject: Type.String(),
  message_id: Type.String({ description: 'The Message-ID header of the message.' }),
  vendor: Type.Union([Type.String(), Type.Null()]),
  vendor_message_id: Type.Union([Type.String(), Type.Null()]),
  captured: Type.Boolean({
    description: 'Kept by the capture vendor on this machine (GET /v1/email/{id}/raw), not delivered anywhere.',
  }),
  cost_usd: Type.Number(),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type EmailRecordT = Static<typeof EmailRecord>;

export const EmailListQuery = Type.Object(
  {
    state: Type.Optional(Type.Union(EMAIL_STATES.map((s) => Type.Literal(s)))),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    cursor: Type.Optional(Type.String()),
    project_id: Type.Optional(Type.String({ description: 'Accepted for the client signature; keys are per project.' })),
  },
  { additionalProperties: false }
);
export type EmailListQueryT = Static<typeof EmailListQuery>;

export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

export const DnsRecord = Type.Object({ type: Type.String(), name: Type.String(), value: Type.String() });

export const DomainBody = Type.Object(
  { domain: Type.String({ minLength: 3, maxLength: 253, examples: ['example.com'] }) },
  { additionalProperties: false }
);

export const DomainRecord = Type.Object({
  domain_id: Type.String(),
  domain: Type.String(),
  verified: Type.Boolean(),
  selector: Type.String(),
  records: Type.Array(DnsRecord),
  missing: Type.Optional(
    Type.Array(Type.String(), { description: 'Records this lookup did not find (dkim, spf, dmarc); on verify only.' })
  ),
  created_at: Type.String(),
});

export const SuppressBody = Type.Object(
  {
    email: Addr,
    reason: Type.Optional(
      Type.Union([
        Type.Literal('manual'),
        Type.Literal('bounce'),
        Type.Literal('complaint'),
        Type.Literal('unsubscribe'),
      ])
    ),
  },
  { additionalProperties: false }
);
export type SuppressBodyT = Static<typeof SuppressBody>;

export const SuppressionRecord = Type.Object({
  email: Type.String(),
  reason: Type.String(),
  created_at: Type.String(),
});

export const EmailParams = Type.Object(
  { email: Type.String({ maxLength: 320, examples: ['ann@example.com'] }) },
  { additionalProperties: false }
);

export const TemplateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    subject: Type.String({ maxLength: 998 }),
    html: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'welcome', subject: 'Welcome, {{name}}', html: '<p>Hello {{name}}</p>' }],
  }
);
export type TemplateBodyT = Static<typeof TemplateBody>;

export const TemplateRecord = Type.Object({
  template_id: Type.String(),
  name: Type.String(),
  subject: Type.String(),
  html: Type.Union([Type.String(), Type.Null()]),
  text: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const TemplateParams = Type.Object(
  { template_id: Type.String({ maxLength: 64 }) },
  { additionalProperties: false }
);

export const RawResult = Type.Object({ id: Type.String(), raw: Type.String() });

export const Deleted = Type.Object({ ok: Type.Boolean() });

export const DomainParams = Type.Object(
  { domain: Type.String({ maxLength: 253, examples: ['example.com'] }) },
  { additionalProperties: false }
);
