import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  ChannelBody,
  ChannelRecord,
  PresenceList,
  PublishBody,
  PublishResult,
  PusherApp,
  RealtimeToken as RealtimeTokenSchema,
  TokenBody,
} from '../plugins/realtime/schemas.js';
import type { PageOf } from './paginate.js';

// The realtime area's wire, from the TypeBox schemas the server validates and serializes with.

export type RealtimeTokenRequest = Static<typeof TokenBody>;
export type RealtimeToken = Static<typeof RealtimeTokenSchema>;
export type RealtimeChannelRequest = Omit<Static<typeof ChannelBody>, 'idempotency_key'>;
export type RealtimeChannel = Static<typeof ChannelRecord>;
export type RealtimeChannelPage = PageOf<RealtimeChannel>;
export type PublishRequest = Omit<Static<typeof PublishBody>, 'idempotency_key'>;
export type PublishResponse = Static<typeof PublishResult>;
export type PresenceMembers = Static<typeof PresenceList>;
export type PusherCredentials = Static<typeof PusherApp>;
