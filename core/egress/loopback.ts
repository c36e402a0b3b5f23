import { classifyAddress, isIpLiteral } from './address-policy.js';

export type LoopbackSetting = 'auto' | boolean;

export interface LoopbackDecision {
  allowed: boolean;
  /** Why, for the start-up log and the hint in a refusal. */
  why: string;
}

/** Whether the gateway's own listen address reaches this machine only (127.0.0.0/8, ::1, localhost). */
export function listensOnLoopbackOnly(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/\.$/, '');
  if (h === 'localhost') return true;
  return isIpLiteral(h) && classifyAddress(h).range === 'loopback';
}

/** How the gateway is reached: what `auto` decides by. */
export interface Reachability {
  /** server.host, the listen address. */
  listenHost: string;
  /** server.public_url ('' when unset: http://HOST:PORT). */
  publicUrl?: string;
  /** server.trust_proxy. */
  trustProxy?: boolean;
}

/**
 * Loopback targets (a receiver on the developer's own machine) are safe to call when nobody
 * but this machine can reach the gateway: whoever hands it a URL could connect to that
 * loopback port themselves. A gateway others can reach would let them into this machine's
 * loopback services (its own /metrics among them), so `auto` refuses when it listens on
 * anything but loopback, and also when it listens on loopback behind a reverse proxy: a
 * public_url that is not loopback, or trust_proxy on, says others come in through one. Only
 * loopback: other private ranges and the metadata service stay refused either way.
 */
export function decideLoopback(setting: LoopbackSetting, reach: Reachability): LoopbackDecision {
  if (setting === true) return { allowed: true, why: 'egress.allow_loopback is true' };
  if (setting === false) return { allowed: false, why: 'egress.allow_loopback is false' };
  const auto = 'egress.allow_loopback is auto and';
  const { listenHost, publicUrl, trustProxy } = reach;
  if (!listensOnLoopbackOnly(listenHost))
    return { allowed: false, why: `${auto} the gateway listens on ${listenHost}, not loopback only` };
  if (trustProxy)
    return { allowed: false, why: `${auto} server.trust_proxy is on (others reach the gateway through a proxy)` };
  const publicHost = publicUrl ? hostOf(publicUrl) : listenHost;
  if (!listensOnLoopbackOnly(publicHost))
    return {
      allowed: false,
      why: `${auto} server.public_url (${publicUrl}) is not loopback (others reach the gateway through it)`,
    };
  return { allowed: true, why: `${auto} the gateway listens on ${listenHost} only` };
}

/** The host of a URL, brackets off; '' (not loopback) when it does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return '';
  }
}
