import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, Page } from '../../core/kit/area.js';

export const MAX_POINTS = 1000;

// Prometheus' metric name alphabet, plus dots (`http.latency`), which the export writes as `_`.
const NAME = '^[a-zA-Z_:][a-zA-Z0-9_:.]*$';

const MetricTags = Type.Record(
  Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-zA-Z_][a-zA-Z0-9_.]*$' }),
  Type.String({ maxLength: 500 }),
  { maxProperties: 20, description: 'Map of string to string (at most 20); each tag set is its own series.' }
);

export const MetricPoint = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: NAME }),
    value: Type.Number({ description: 'Any finite number.' }),
    tags: Type.Optional(MetricTags),
    timestamp: Type.Optional(
      Type.String({ format: 'date-time', description: 'When it was measured (ISO 8601); default: received.' })
    ),
  },
  { additionalProperties: false }
);
export type MetricPointT = Static<typeof MetricPoint>;

export const MetricsBody = Type.Union([MetricPoint, Type.Array(MetricPoint, { minItems: 1 })], {
  description: `One point or a list of up to ${MAX_POINTS}.`,
});

export const EventBody = Type.Object(
  {
    event: Type.String({ minLength: 1, maxLength: 200 }),
    properties: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Unknown())),
    distinct_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false }
);
export type EventBodyT = Static<typeof EventBody>;

export const StoredEvent = Type.Object({
  event_id: Type.String(),
  event: Type.String(),
  distinct_id: Type.Union([Type.String(), Type.Null()]),
  properties: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String(),
});

export const EventListQuery = Type.Composite(
  [ListQuery, Type.Object({ event: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) })],
  { additionalProperties: false }
);

export const EventList = Page(StoredEvent);

export const AGGS = ['sum', 'avg', 'min', 'max', 'p50', 'p95', 'count'] as const;
export type Agg = (typeof AGGS)[number];

export const MetricQuery = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: NAME }),
    from: Type.String({
      format: 'date-time',
      description: 'Start of the range (inclusive).',
      examples: ['2026-01-01T00:00:00.000Z'],
    }),
    to: Type.String({
      format: 'date-time',
      description: 'End of the range (exclusive); after `from`.',
      examples: ['2026-01-01T01:00:00.000Z'],
    }),
    step: Type.Integer({ minimum: 1, maximum: 31_536_000, default: 60, description: 'Bucket width in seconds.' }),
    agg: Type.Union(
      AGGS.map((a) => Type.Literal(a)),
      { default: 'avg' }
    ),
    group_by: Type.Optional(
      Type.String({
        maxLength: 500,
        description: 'Comma-separated tag names a series is keyed by; default: every tag (each tag set a series).',
      })
    ),
  },
  { additionalProperties: false }
);
export type MetricQueryT = Static<typeof MetricQuery>;

export const MetricSeries = Type.Object({
  name: Type.String(),
  agg: Type.String(),
  step: Type.Integer(),
  series: Type.Array(
    Type.Object({
      tags: Type.Record(Type.String(), Type.String()),
      points: Type.Array(
        Type.Object({ t: Type.String({ description: 'Start of the bucket.' }), value: Type.Number() })
      ),
    })
  ),
});
