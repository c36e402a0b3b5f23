import { Type, type Static } from '@sinclair/typebox';

// The analytics wire, the single source of validation, serialization, OpenAPI and discovery.

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const Timestamp = (description: string) =>
  Type.String({ minLength: 1, maxLength: 40, description, examples: ['2026-11-22T05:48:27.123Z'] });

export const TrackEvent = Type.Object(
  {
    event: Type.String({ minLength: 1, maxLength: 200, description: 'Event name.', examples: ['signup'] }),
    distinct_id: Id('Who did it: an anonymous id or a user id (identify merges them).'),
    properties: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'Any JSON values (at most max_event_bytes).' })
    ),
    timestamp: Type.Optional(Timestamp('When it happened (ISO 8601); default: when the gateway received it.')),
    uuid: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Dedup key: an event sent again is stored once.' })
    ),
  },
  { additionalProperties: false }
);
export type TrackEventT = Static<typeof TrackEvent>;

export const TrackBody = Type.Union([TrackEvent, Type.Array(TrackEvent, { minItems: 1 })], {
  description: 'One event, or a list of them (at most max_batch_events, 1,000 by default).',
  examples: [{ event: 'signup', distinct_id: 'anon-42', properties: { plan: 'pro' } }],
});
export type TrackBodyT = Static<typeof TrackBody>;

export const TrackResult = Type.Object({
  ok: Type.Boolean(),
  accepted: Type.Integer({ description: 'Events stored by this call.' }),
  duplicates: Type.Integer({ description: 'Events whose uuid was stored before: not stored again.' }),
});

export const IdentifyBody = Type.Object(
  {
    distinct_id: Id('The id events were sent with so far (an anonymous id).'),
    user_id: Type.Optional(Id("The user's own id: the distinct id becomes the same person.")),
    traits: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Merged into the person.' })),
  },
  { additionalProperties: false, examples: [{ distinct_id: 'anon-42', user_id: 'user-7', traits: { plan: 'pro' } }] }
);
export type IdentifyBodyT = Static<typeof IdentifyBody>;

export const PersonParams = Type.Object({ distinct_id: Id('Any distinct id of the person.') });

export const Person = Type.Object({
  person_id: Type.String({ description: 'The id every distinct id of the person is counted as.' }),
  distinct_ids: Type.Array(Type.String(), { description: 'Ids merged into the person (identify).' }),
  traits: Type.Record(Type.String(), Type.Unknown()),
});

/** A property's value to compare with: equal as JSON values. */
const PropertyValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

export const FunnelBody = Type.Object(
  {
    steps: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
      minItems: 1,
      maxItems: 20,
      description: 'Event names in the order a person has to do them.',
    }),
    from: Timestamp('Start of the range (inclusive).'),
    to: Timestamp('End of the range (exclusive).'),
    window_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 366 * 86_400,
        description: 'Every step within this long of the first one (default 14 days).',
      })
    ),
    group_by: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "A property of the first step's event: counts per value as well.",
      })
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { steps: ['signup', 'activate', 'purchase'], from: '2026-11-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z' },
    ],
  }
);
export type FunnelBodyT = Static<typeof FunnelBody>;

const FunnelStep = Type.Object({
  event: Type.String(),
  count: Type.Integer({ description: 'People who did this step and every one before it, in order.' }),
  conversion_pct: Type.Number({ description: 'count of this step / count of the first step × 100 (0 when none).' }),
});

export const FunnelResult = Type.Object({
  steps: Type.Array(FunnelStep),
  groups: Type.Optional(
    Type.Array(
      Type.Object({
        value: Type.Union([Type.String(), Type.Null()], { description: 'The group_by property as text.' }),
        steps: Type.Array(FunnelStep),
      }),
      { description: 'With group_by: the funnel of each value, most first steps first.' }
    )
  ),
});
export type FunnelResultT = Static<typeof FunnelResult>;

export const PERIODS = ['day', 'week', 'month'] as const;

export const CohortBody = Type.Object(
  {
    definition: Type.Object(
      {
        event: Type.String({
          minLength: 1,
          maxLength: 200,
          description: 'The event that puts a person in the cohort.',
        }),
        filter: Type.Optional(
          Type.Record(Type.String({ minLength: 1, maxLength: 200 }), PropertyValue, {
            maxProperties: 10,
            description: 'Properties the event must have, each equal to this value.',
          })
        ),
      },
      { additionalProperties: false }
    ),
    from: Timestamp('Start of the first period (inclusive).'),
    to: Timestamp('End of the range (exclusive).'),
    period: Type.Optional(
      Type.Union(
        PERIODS.map((p) => Type.Literal(p)),
        { description: 'Length of a bucket (default day).' }
      )
    ),
  },
  {
    additionalProperties: false,
    examples: [{ definition: { event: 'login' }, from: '2026-11-01T00:00:00.000Z', to: '2026-11-08T00:00:00.000Z' }],
  }
);
export type CohortBodyT = Static<typeof CohortBody>;

export const CohortResult = Type.Object({
  buckets: Type.Array(
    Type.Object({
      bucket: Type.Integer({ description: 'Periods after the first one (0: the cohort itself).' }),
      start: Type.String({ description: 'When the period starts.' }),
      size: Type.Integer({ description: 'People of the cohort who did the event again in this period.' }),
    })
  ),
});
export type CohortResultT = Static<typeof CohortResult>;

export const PublicKey = Type.Object({
  public_key: Type.String({ description: 'Write-only key for PostHog SDKs in browsers and servers (phc_…).' }),
  host: Type.String({ description: "The `host` to give posthog-js or posthog-node (the gateway's capture path)." }),
});
