import { fieldError } from '../../core/kit/area.js';

// Headers a caller may add to a webhook delivery. The schema already limits names to tokens
// and values to printable ASCII (no CR/LF); what is left is names that would break or
// subvert the request: the ones the gateway sets itself (the signature, the body's framing)
// and hop-by-hop ones, which belong to a connection, not to a message (RFC 9110 §7.6.1).
// Accepting them would only make every attempt fail later, so they are refused at creation.

const SET_BY_GATEWAY = /^(webhook-.*|content-type|content-length|content-encoding|host|user-agent)$/i;
const HOP_BY_HOP = /^(connection|keep-alive|transfer-encoding|te|trailer|upgrade|expect|http2-settings|proxy-.*)$/i;

/** Throws a 400 naming the first header a delivery may not carry. */
export function checkDeliveryHeaders(headers: Record<string, string> | undefined): void {
  for (const name of Object.keys(headers ?? {})) {
    const param = `headers.${name}`;
    if (SET_BY_GATEWAY.test(name)) {
      throw fieldError(param, 'is reserved', `${param} is set by the gateway and cannot be overridden.`);
    }
    if (HOP_BY_HOP.test(name)) {
      const why = 'is a hop-by-hop or connection-level header, which a webhook delivery cannot carry';
      throw fieldError(param, 'is not allowed', `${param} ${why}.`);
    }
  }
}
