import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, Page } from '../../../core/kit/area.js';
import { OPS } from './evaluate.js';

export const FLAG_KEY = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$';

const Name = Type.String({ minLength: 1, maxLength: 100 });
const Scalar = Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean()]);

export const Condition = Type.Object(
  {
    attribute: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'A context attribute (`country`, `distinct_id`).',
    }),
    op: Type.Union(OPS.map((o) => Type.Literal(o))),
    value: Type.Optional(Scalar),
    values: Type.Optional(Type.Array(Scalar, { maxItems: 1000 })),
  },
  { additionalProperties: false }
);

export const Serve = Type.Object(
  {
    variant: Type.Optional(Name),
    rollout: Type.Optional(
      Type.Array(
        Type.Object(
          { variant: Name, weight: Type.Number({ minimum: 0, maximum: 100 }) },
          { additionalProperties: false }
        ),
        { minItems: 1, maxItems: 50, description: 'Percentages by variant, summing to 100; ranges in this order.' }
      )
    ),
  },
  { additionalProperties: false, description: 'Exactly one of `variant` or `rollout`.' }
);

export const Rule = Type.Object(
  {
    description: Type.Optional(Type.String({ maxLength: 500 })),
    conditions: Type.Array(Condition, { minItems: 1, maxItems: 20, description: 'All must hold.' }),
    serve: Serve,
  },
  { additionalProperties: false }
);

const FlagType = Type.Union([
  Type.Literal('boolean'),
  Type.Literal('string'),
  Type.Literal('number'),
  Type.Literal('json'),
]);

const settings = {
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  enabled: Type.Optional(Type.Boolean({ description: 'Off: every context gets `off_variant` (default true).' })),
  variants: Type.Optional(
    Type.Record(Name, Type.Unknown(), {
      maxProperties: 50,
      description: 'Variant name to value, of the flag type; boolean flags default to { on: true, off: false }.',
    })
  ),
  off_variant: Type.Optional(Name),
  rules: Type.Optional(
    Type.Array(Rule, { maxItems: 100, description: 'Tried in order; the first that holds serves.' })
  ),
  fallthrough: Type.Optional(Serve),
};

export const FlagCreate = Type.Object(
  { key: Type.String({ pattern: FLAG_KEY }), type: FlagType, ...settings },
  { additionalProperties: false }
);
export type FlagCreateT = Static<typeof FlagCreate>;

export const FlagUpdate = Type.Object(
  {
    type: FlagType,
    ...settings,
    version: Type.Integer({
      minimum: 1,
      description: 'The version this change is based on (409 if it is not the current).',
    }),
  },
  { additionalProperties: false }
);
export type FlagUpdateT = Static<typeof FlagUpdate>;

export const Flag = Type.Object({
  key: Type.String(),
  type: FlagType,
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  variants: Type.Record(Type.String(), Type.Unknown()),
  off_variant: Type.String(),
  rules: Type.Array(Rule),
  fallthrough: Serve,
  version: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const FlagList = Page(Flag);
export const FlagKeyParams = Type.Object({ key: Type.String({ pattern: FLAG_KEY }) }, { additionalProperties: false });
export const FlagDeleteQuery = Type.Object(
  { version: Type.Optional(Type.Integer({ minimum: 1 })) },
  { additionalProperties: false }
);

export const FlagAudit = Type.Object({
  audit_id: Type.String(),
  key: Type.String(),
  action: Type.String({ description: '`created`, `updated` or `deleted`.' }),
  version: Type.Integer(),
  key_id: Type.String({ description: 'The API key that made the change.' }),
  before: Type.Union([Flag, Type.Null()]),
  after: Type.Union([Flag, Type.Null()]),
  created_at: Type.String(),
});
export const FlagAuditList = Page(FlagAudit);

export const Evaluation = Type.Object({
  key: Type.String(),
  enabled: Type.Boolean(),
  value: Type.Unknown(),
  variant: Type.String(),
  reason: Type.String({ description: 'STATIC, TARGETING_MATCH, SPLIT, DEFAULT or DISABLED (OpenFeature reasons).' }),
});

export const EvalQuery = Type.Object(
  { distinct_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  {
    additionalProperties: Type.String({ maxLength: 1000 }),
    description: 'The context: distinct_id (what rollouts bucket by) and any attributes (`country=DE`).',
  }
);

export { ListQuery };
