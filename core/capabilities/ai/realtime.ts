// The capability contract of live sessions (`ai.realtime.token`): an ephemeral vendor secret a
// client opens its WebRTC session with. Adapters import these types; the area never imports an adapter.

// The area prices a token (flat, `router.price`); with the caller's own key (BYOK) the adapter is
// handed it as `credentials` in the invoke options, and the call costs the platform fee.

export interface RealtimeTokenInput {
  model?: string;
  voice?: string;
  ttl_seconds: number;
}

export interface RealtimeTokenOutput {
  /** The vendor's ephemeral client secret: handed to the caller once, never logged. */
  token: string;
  /** Ms since epoch. */
  expires_at: number;
  vendor_session_id?: string;
  model: string;
}
