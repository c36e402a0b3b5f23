// The capability contract of live sessions (`ai.realtime.token`): an ephemeral vendor secret a
// client opens its WebRTC session with. Adapters import these types; the area never imports an adapter.

/** What one candidate instance is asked to do, decided by the area: a flat price, and whose key. */
export interface RealtimePlan {
  /** Flat charge in micro-USD: the area's price (0 with the caller's key: the credentials provider adds its fee). */
  price: number;
  /** The caller's own credentials for this vendor (BYOK), decrypted for this call only. */
  credentials?: Record<string, string>;
}

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
