import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Url } from './schemas.js';

// The wire of the gateway's event endpoints (/v1/events/endpoints), stated once.

const EventType = Type.String({
  minLength: 3,
  maxLength: 100,
  pattern: '^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$',
  examples: ['email.delivered'],
});

export const EndpointCreateBody = Type.Object(
  {
    url: Url,
    event_types: Type.Optional(
      Type.Array(EventType, {
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
        description: 'Deliver only these types (GET /v1/events/types lists them); default: every type.',
      })
    ),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false }
);
export type EndpointCreateBodyT = Static<typeof EndpointCreateBody>;

export const Endpoint = Type.Object({
  endpoint_id: Type.String(),
  url: Type.String(),
  event_types: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: 'The types delivered; null: every type.',
  }),
  description: Type.Optional(Type.String()),
  created_at: Timestamp,
});

export const EndpointCreated = Type.Intersect([
  Endpoint,
  Type.Object({
    secret: Type.String({
      description: "The endpoint's whsec_ signing secret (Standard Webhooks). Shown once, here.",
    }),
  }),
]);

export const EventTypes = Type.Object({
  items: Type.Array(Type.Object({ type: Type.String(), description: Type.String() })),
});
