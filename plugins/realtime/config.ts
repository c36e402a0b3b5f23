import { Type, type Static } from '@sinclair/typebox';

const TierLimits = Type.Object(
  {
    connections: Type.Integer({
      minimum: 1,
      description: 'Open sockets of one account: on all nodes together with redis_url, else on this node.',
    }),
    messages_per_second: Type.Integer({
      minimum: 1,
      description: 'Publishes of one account (API, Pusher REST and client events), shared by all nodes.',
    }),
    channels_per_connection: Type.Integer({ minimum: 1, description: 'Channels one socket may be subscribed to.' }),
  },
  { additionalProperties: false }
);

/** `plugins.realtime` in the config file. */
export const RealtimeConfig = Type.Object(
  {
    max_data_bytes: Type.Integer({
      minimum: 1,
      maximum: 1024 * 1024,
      default: 256 * 1024,
      description: 'Largest `data` of one message, as JSON bytes (413 payload_too_large above).',
    }),
    history_seconds: Type.Integer({
      minimum: 0,
      maximum: 3600,
      default: 120,
      description: 'How long a message is kept for a client resuming after a disconnect.',
    }),
    history_messages: Type.Integer({
      minimum: 0,
      maximum: 10_000,
      default: 100,
      description: 'Messages a resume replays at the most, per channel.',
    }),
    presence_timeout_seconds: Type.Integer({
      minimum: 3,
      maximum: 600,
      default: 30,
      description:
        'A node refreshes its presence members every third of this; members of a node that stopped doing so leave after it.',
    }),
    max_buffered_bytes: Type.Integer({
      minimum: 1024,
      default: 4 * 1024 * 1024,
      description:
        'Bytes waiting to be written to one socket; above it the socket is closed with code 4100 (slow consumer).',
    }),
    activity_timeout_seconds: Type.Integer({
      minimum: 1,
      maximum: 600,
      default: 120,
      description:
        'Pusher activity_timeout (a client pings after this much silence); the gateway pings silent sockets as '
        + 'often and closes those that did not answer the previous ping (native 4408, Pusher 4201); a slow '
        + 'consumer (4100) that has not read up to its close frame after this long is dropped without it.',
    }),
    tier_limits: Type.Record(Type.String(), TierLimits, {
      default: {
        free: { connections: 100, messages_per_second: 10, channels_per_connection: 100 },
        pro: { connections: 10_000, messages_per_second: 1_000, channels_per_connection: 1_000 },
      },
      description: 'Per account tier; a tier not listed has the limits of `free`.',
    }),
    price_per_million_messages_usd: Type.Number({
      minimum: 0,
      default: 1,
      description: 'Charged per message published and per copy delivered to a socket.',
    }),
    price_per_million_connection_minutes_usd: Type.Number({
      minimum: 0,
      default: 10,
      description: 'Charged per minute a socket is open.',
    }),
    meter_interval_seconds: Type.Integer({
      minimum: 1,
      maximum: 3600,
      default: 60,
      description: "How often a node debits its accounts' messages and connection minutes from the wallet.",
    }),
  },
  { additionalProperties: false, default: {} }
);

export type RealtimeConfigT = Static<typeof RealtimeConfig>;
export type TierLimitsT = Static<typeof TierLimits>;

export function limitsOf(cfg: RealtimeConfigT, tier: string): TierLimitsT {
  return (
    cfg.tier_limits[tier]
    ?? cfg.tier_limits.free ?? { connections: 100, messages_per_second: 10, channels_per_connection: 100 }
  );
}
