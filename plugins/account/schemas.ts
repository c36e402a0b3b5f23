import { Type, type Static } from '@sinclair/typebox';
import { Page, IdempotencyKey } from '../../core/kit/area.js';

// The Account area's wire, stated once: validation, serialization, OpenAPI, discovery and
// the client's types all come from here.

const Id = (prefix: string, description: string) => Type.String({ pattern: `^${prefix}_[0-9A-Za-z]+$`, description });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });
export const Scope = Type.String({
  pattern: '^(\\*|[a-z][a-z0-9_-]*(:[a-z][a-z0-9_-]*)?)$',
  description: '`*`, an area (`storage`), or area:level (`storage:read`).',
});

export const ActivateBody = Type.Object(
  {
    region: Type.Optional(
      Type.Union([Type.Literal('auto'), Type.Literal('western'), Type.Literal('china')], { default: 'auto' })
    ),
    write_credentials: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'Whether the client stores the key locally; the server records nothing about it.',
      })
    ),
    device_kind: Type.Optional(Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z0-9_-]+$', default: 'cli' })),
  },
  { additionalProperties: false }
);

export const ActivateResult = Type.Object({
  account_id: Id('acct', 'The account.'),
  project_id: Id('proj', 'The default project.'),
  primary_api_key: Type.String({ description: 'The project key; shown once.' }),
  trial_credit_usd: Type.Number(),
  checkout_url: Type.String({
    description: 'Where to add funds (POST /v1/account/topup makes a checkout for an amount).',
  }),
});

export const Balance = Type.Object({ balance_usd: Type.Number(), currency: Type.String() });

export const ProjectKey = Type.Object({
  key_id: Id('key', 'The key.'),
  label: Type.String(),
  scopes: Type.Array(Type.String()),
  created_at: Timestamp,
  expires_at: Type.Optional(Timestamp),
});

export const CreatedKey = Type.Intersect([
  ProjectKey,
  Type.Object({ secret: Type.String({ description: 'The key itself; shown once.' }) }),
]);

export const KeyList = Page(ProjectKey);

export const CreateKeyBody = Type.Object(
  {
    label: Type.String({ minLength: 1, maxLength: 100 }),
    scopes: Type.Optional(Type.Array(Scope, { minItems: 1, maxItems: 32, uniqueItems: true, default: ['*'] })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);

export const KeyIdParams = Type.Object(
  { key_id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false }
);

export const RotatedKey = Type.Intersect([
  CreatedKey,
  Type.Object({ old_key_id: Type.String(), old_key_expires_at: Timestamp }),
]);

export const AccountSummary = Type.Object({
  account_id: Type.String(),
  kind: Type.Union([Type.Literal('anonymous'), Type.Literal('registered')]),
  status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
  tier: Type.String(),
  balance_usd: Type.Number(),
  region: Type.Optional(Type.String()),
  project_id: Type.Optional(Type.String()),
  created_at: Type.Optional(Timestamp),
});

export type ActivateBodyT = Static<typeof ActivateBody>;
export type CreateKeyBodyT = Static<typeof CreateKeyBody>;
