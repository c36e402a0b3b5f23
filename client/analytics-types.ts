import type { Static } from '@sinclair/typebox';
// Type-only: erased at build time, so the client carries no server code at run time.
import type {
  CohortBody,
  CohortResult,
  FunnelBody,
  FunnelResult,
  IdentifyBody,
  Person,
  PublicKey,
  TrackEvent,
  TrackResult,
} from '../plugins/analytics/schemas.js';

// The analytics area's wire, from the TypeBox schemas the server validates and serializes with.

export type AnalyticsEvent = Static<typeof TrackEvent>;
export type TrackResponse = Static<typeof TrackResult>;
export type IdentifyRequest = Static<typeof IdentifyBody>;
export type AnalyticsPerson = Static<typeof Person>;
export type FunnelRequest = Static<typeof FunnelBody>;
export type FunnelResponse = Static<typeof FunnelResult>;
export type CohortRequest = Static<typeof CohortBody>;
export type CohortResponse = Static<typeof CohortResult>;
export type AnalyticsPublicKey = Static<typeof PublicKey>;
