import { Type, type Static } from '@sinclair/typebox';

// The wire of GET /v1/discovery and GET /v1/discovery/{id}.

const Billing = Type.Object({
  unit: Type.String({
    description: 'What the price is for (`1m_input_tokens`, `image`, `1k_characters`, `minute`, `gib_month`…).',
  }),
  price_usd: Type.Number(),
  free_quota: Type.Optional(Type.Number()),
});

export const DiscoveryItem = Type.Object({
  id: Type.String({ description: 'Operation id (`account.topup`), also the OpenAPI operationId.' }),
  method: Type.String(),
  path: Type.String({ description: 'Path with `{param}` placeholders, relative to the public URL.' }),
  summary: Type.Optional(Type.String()),
  capability: Type.Union([Type.String(), Type.Null()], {
    description: 'Vendor capability the operation needs; null when the gateway serves it alone.',
  }),
  available: Type.Boolean({
    description: 'A healthy vendor serves the capability right now (always true without one).',
  }),
  reason: Type.Optional(
    Type.String({
      description: 'Only when available is false: why, and what to do (the words of the 503 no_vendor_available).',
    })
  ),
  regions: Type.Array(Type.String(), { description: 'Regions the serving vendors cover; empty without a capability.' }),
  vendors: Type.Array(Type.String(), { description: 'Configured vendor instances that serve it, in route order.' }),
  billing: Type.Union([Billing, Type.Null()], {
    description:
      'The lowest list price, with the markup: what one unit costs at least; null when a call is (or can be) free.',
  }),
});

export const DiscoveryList = Type.Object({ items: Type.Array(DiscoveryItem) });

export const DiscoveryError = Type.Object({
  code: Type.String(),
  status: Type.Integer(),
  retryable: Type.Boolean(),
  meaning: Type.String(),
});

const JsonSchema = Type.Unknown({ description: 'A JSON Schema (2020-12 compatible).' });

export const DiscoveryDetail = Type.Composite([
  DiscoveryItem,
  Type.Object({
    description: Type.Optional(Type.String()),
    auth: Type.Union([Type.Literal('key'), Type.Literal('none'), Type.Literal('admin')]),
    scope: Type.Union([Type.String(), Type.Null()], { description: 'Scope a key needs; null when any key will do.' }),
    idempotent: Type.Boolean({ description: 'Honours `idempotency_key` / the idempotency-key header.' }),
    request: Type.Object({
      body: Type.Optional(JsonSchema),
      querystring: Type.Optional(JsonSchema),
      params: Type.Optional(JsonSchema),
    }),
    response: Type.Union([JsonSchema, Type.Null()], { description: 'Schema of the success body.' }),
    errors: Type.Array(DiscoveryError),
    example: Type.Object({
      curl: Type.String({ description: 'Runnable with SVC_API_KEY (or SVC_ADMIN_KEY) in the environment.' }),
      body: Type.Union([Type.Unknown(), Type.Null()], { description: 'The body the curl command sends.' }),
    }),
  }),
]);

export const DiscoveryIdParams = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[a-z0-9_.-]+$' }),
  },
  { additionalProperties: false }
);

export type DiscoveryItemT = Static<typeof DiscoveryItem>;
export type DiscoveryDetailT = Static<typeof DiscoveryDetail>;
