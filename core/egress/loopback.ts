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

/**
 * Loopback targets (a receiver on the developer's own machine) are safe to call when nobody
 * but this machine can reach the gateway: whoever hands it a URL could connect to that
 * loopback port themselves. A gateway others can reach (0.0.0.0, a LAN or public address)
 * would let them into this machine's loopback services, so `auto` refuses there. Only
 * loopback: other private ranges and the metadata service stay refused either way.
 */
export function decideLoopback(setting: LoopbackSetting, listenHost: string): LoopbackDecision {
  if (setting === true) return { allowed: true, why: 'egress.allow_loopback is true' };
  if (setting === false) return { allowed: false, why: 'egress.allow_loopback is false' };
  return listensOnLoopbackOnly(listenHost)
    ? { allowed: true, why: `egress.allow_loopback is auto and the gateway listens on ${listenHost} only` }
    : {
        allowed: false,
        why: `egress.allow_loopback is auto and the gateway listens on ${listenHost}, not loopback only`,
      };
}
