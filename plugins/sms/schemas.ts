import { Type, type Static } from '@sinclair/typebox';
import { SMS_STATES } from '../../core/kit/area.js';

// The SMS wire, the single source of validation, serialization, OpenAPI and discovery.

export const MAX_BODY_CHARS = 1600;

const E164 = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'E.164 number, e.g. +14155550100.',
  examples: ['+14155550100'],
});

export const SendBody = Type.Object(
  {
    to: E164,
    body: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_BODY_CHARS,
        description: 'The text (at most 1,600 characters).',
        examples: ['Your order has shipped.'],
      })
    ),
    from: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'Sender id or number.' })),
    template_id: Type.Optional(Type.String({ minLength: 1, description: 'A stored template instead of a body.' })),
    vendor: Type.Optional(Type.String({ minLength: 1, description: 'Pin one configured vendor instance.' })),
    idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  // A body or a template: the example shows the body.
  { additionalProperties: false, examples: [{ to: '+14155550100', body: 'Your order has shipped.' }] }
);
export type SendBodyT = Static<typeof SendBody>;

export const SmsStateSchema = Type.Union(SMS_STATES.map((s) => Type.Literal(s)));

export const SmsRecord = Type.Object({
  sms_id: Type.String(),
  to: Type.String(),
  from: Type.Union([Type.String(), Type.Null()]),
  state: SmsStateSchema,
  vendor: Type.Union([Type.String(), Type.Null()]),
  segments: Type.Integer({ description: "Segments as carriers count them (the vendor's count once sent)." }),
  encoding: Type.Union([Type.Literal('GSM-7'), Type.Literal('UCS-2')]),
  captured: Type.Boolean({ description: 'Kept by the sms-capture vendor on this gateway, never sent to a phone.' }),
  cost_usd: Type.Number(),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type SmsRecordT = Static<typeof SmsRecord>;

export const SmsList = Type.Object({
  items: Type.Array(SmsRecord),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const ListFilter = Type.Object({ state: Type.Optional(SmsStateSchema) });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const CapturedMessage = Type.Object({
  sms_id: Type.String(),
  to: Type.String(),
  from: Type.Union([Type.String(), Type.Null()]),
  body: Type.String(),
  segments: Type.Integer(),
  captured_at: Type.String(),
});

export const OtpBody = Type.Object(
  { to: E164, idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) },
  { additionalProperties: false }
);

export const OtpResult = Type.Object({
  request_id: Type.String(),
  expires_at: Type.String(),
  sms_id: Type.String({ description: 'The message that carries the code (GET /v1/sms/{id}).' }),
});

export const VerifyBody = Type.Object(
  {
    to: E164,
    code: Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit passcode.', examples: ['123456'] }),
  },
  { additionalProperties: false }
);

export const VerifyResult = Type.Object({ valid: Type.Boolean() });
