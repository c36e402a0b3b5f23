import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './schemas.js';

// The usage report's wire (beyond the spec): what the wallet's usage entries add up to,
// by UTC day or by capability, over a time range.

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({ format: 'date-time', description: 'Start, inclusive (ISO 8601). Default: 30 days before `to`.' })
    ),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'End, exclusive (ISO 8601). Default: now.' })),
    group_by: Type.Unsafe<'day' | 'capability'>({
      type: 'string',
      enum: ['day', 'capability'],
      default: 'day',
      description: 'One item per UTC day (oldest first) or per capability.',
    }),
  },
  { additionalProperties: false }
);

export const UsageItem = Type.Object({
  day: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'UTC day (group_by=day).' })),
  capability: Type.Optional(Type.String({ description: 'Capability id, such as ai.chat (group_by=capability).' })),
  cost_usd: Type.Number({ description: 'What the calls were charged, USD.' }),
  calls: Type.Integer({ minimum: 0, description: 'Charged calls.' }),
});

export const UsageReport = Type.Object({
  items: Type.Array(UsageItem),
  from: Timestamp,
  to: Timestamp,
  total_usd: Type.Number(),
});

export type UsageQueryT = Static<typeof UsageQuery>;
