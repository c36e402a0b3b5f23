import { Type, type Static } from '@sinclair/typebox';
import { IdempotencyKey, Page } from '../../core/kit/area.js';

export const TestResult = Type.Object({
  ok: Type.Boolean(),
  latency_ms: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

export const ByokKey = Type.Object({
  byok_id: Type.String(),
  provider: Type.String(),
  alias: Type.String(),
  state: Type.Union([Type.Literal('active'), Type.Literal('invalid'), Type.Literal('revoked')]),
  created_at: Type.String(),
  test_result: Type.Optional(TestResult),
});

export const CreateByokBody = Type.Object(
  {
    provider: Type.String({
      minLength: 1,
      maxLength: 64,
      examples: ['openai'],
      description: 'Vendor provider id (`openai`, `anthropic`, a configured instance such as `deepseek`).',
    }),
    alias: Type.String({ minLength: 1, maxLength: 100, examples: ['my-openai'] }),
    credentials: Type.Record(Type.String(), Type.String({ maxLength: 4096 }), {
      description: 'Write-only: never returned.',
      examples: [{ api_key: 'sk-your-key' }],
    }),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false }
);
export type CreateByokBodyT = Static<typeof CreateByokBody>;

export const ByokList = Page(ByokKey);
export const ByokIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
