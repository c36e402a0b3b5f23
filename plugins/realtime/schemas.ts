import { Type, type Static } from '@sinclair/typebox';
import { CHANNEL_GRANT_PATTERN, CHANNEL_PATTERN, CHANNEL_TYPES } from './channel-names.js';

// The realtime wire, the single source of validation, serialization, OpenAPI and discovery.

const ChannelName = Type.String({
  pattern: CHANNEL_PATTERN,
  description: "Letters, digits and `_-=@,.;`, up to 164 (Pusher's alphabet); `private-` and `presence-` name a type.",
  examples: ['orders'],
});
const ChannelTypeSchema = Type.Union(CHANNEL_TYPES.map((c) => Type.Literal(c)));
const IdempotencyKey = Type.Optional(Type.String({ minLength: 1, maxLength: 255 }));

export const TokenBody = Type.Object(
  {
    user_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'Your id of the end user (presence shows it).' })
    ),
    channels: Type.Optional(
      Type.Array(Type.String({ pattern: CHANNEL_GRANT_PATTERN, minLength: 1 }), {
        maxItems: 100,
        description: 'Channels the token may use: names, or prefixes ending in `*`. Without it: public channels only.',
        examples: [['orders', 'presence-room-*']],
      })
    ),
    ttl_seconds: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 86_400, default: 3600, description: 'Lifetime: 60 s to 24 h.' })
    ),
    publish: Type.Optional(
      Type.Boolean({ default: false, description: 'Whether the client may publish to the channels it may use.' })
    ),
  },
  { additionalProperties: false, examples: [{ user_id: 'u_42', channels: ['orders', 'presence-room-*'] }] }
);
export type TokenBodyT = Static<typeof TokenBody>;

export const RealtimeToken = Type.Object({
  token: Type.String({ description: 'Signed client token, checked without a database read.' }),
  client_id: Type.String(),
  expires_at: Type.String(),
  endpoint: Type.String({ description: 'WebSocket URL a client opens with `?token=<token>`.' }),
});

export const ChannelBody = Type.Object(
  { name: ChannelName, type: Type.Optional(ChannelTypeSchema), idempotency_key: IdempotencyKey },
  { additionalProperties: false, examples: [{ name: 'presence-lobby', type: 'presence' }] }
);
export type ChannelBodyT = Static<typeof ChannelBody>;

export const ChannelRecord = Type.Object({
  channel_id: Type.String(),
  name: Type.String(),
  type: ChannelTypeSchema,
  created_at: Type.String(),
});
export type ChannelRecordT = Static<typeof ChannelRecord>;

export const ChannelList = Type.Object({
  items: Type.Array(ChannelRecord),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const ChannelParams = Type.Object({ channel: ChannelName });

export const PublishBody = Type.Object(
  {
    channel: ChannelName,
    event: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^(?!pusher[:_]).*$',
      description: 'Event name (not starting with `pusher:` or `pusher_`, which the protocol keeps).',
    }),
    data: Type.Unknown({ description: 'Any JSON value, up to 256 KiB as JSON.' }),
    idempotency_key: IdempotencyKey,
  },
  { additionalProperties: false, examples: [{ channel: 'orders', event: 'created', data: { id: 42 } }] }
);
export type PublishBodyT = Static<typeof PublishBody>;

export const PublishResult = Type.Object({ message_id: Type.String() });

export const PresenceList = Type.Object({
  members: Type.Array(Type.Object({ client_id: Type.String(), user_id: Type.Optional(Type.String()) })),
});

export const PusherApp = Type.Object({
  app_id: Type.String(),
  key: Type.String(),
  secret: Type.String({ description: 'Signs channel authorizations and REST calls; keep it on your server.' }),
  ws_host: Type.String(),
  ws_port: Type.Integer(),
  force_tls: Type.Boolean(),
  created_at: Type.String(),
});
