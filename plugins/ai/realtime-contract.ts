// The capability contract of live sessions (`ai.realtime.token`): an ephemeral vendor secret a
// client opens its WebRTC session with. Adapters import these types; the area never imports an adapter.

export interface RealtimeTokenInput {
  model?: string;
  voice?: string;
  ttl_seconds: number;
  /** Flat charge in micro-USD for the session token, decided by the area's config. */
  price: number;
}

export interface RealtimeTokenOutput {
  /** The vendor's ephemeral client secret: handed to the caller once, never logged. */
  token: string;
  /** Ms since epoch. */
  expires_at: number;
  vendor_session_id?: string;
  model: string;
}
