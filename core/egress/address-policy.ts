import ipaddr from 'ipaddr.js';
import { embeddedIPv4, isMetadataAddress } from './metadata.js';

// Which addresses the gateway may connect to on a caller's behalf. Only globally routable
// unicast passes: ipaddr.js names every special-purpose range (private, loopback, link-local,
// unique-local, CGNAT, multicast, broadcast, unspecified, reserved, documentation, NAT64,
// 6to4, Teredo…), so anything that is not plain `unicast` is refused. IPv6 forms that embed
// an IPv4 address (mapped ::ffff:a.b.c.d, the deprecated compatible ::a.b.c.d) are judged by
// the IPv4 address inside, so [::ffff:127.0.0.1] is loopback like 127.0.0.1. The metadata
// service (metadata.ts) is refused before any of this, in every form.

export interface AddressVerdict {
  ok: boolean;
  /** The normalized address (IPv4-mapped IPv6 becomes IPv4). */
  address: string;
  family: 4 | 6;
  /** Why it is refused: `loopback`, `private`, `metadata`… */
  range: string;
}

export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}

/** Classify one address; `ok` means any gateway may connect to it by default. */
export function classifyAddress(raw: string): AddressVerdict {
  const raw6 = raw.replace(/^\[|\]$/g, '');
  let addr = ipaddr.parse(raw6);
  // Never allowed, whatever the config: judged first, on every form of the address.
  const metadata = isMetadataAddress(raw6);
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    const inner = embeddedIPv4(v6);
    if (inner?.form === 'mapped') {
      addr = inner.v4;
    } else if (inner?.form === 'compatible') {
      // ::a.b.c.d (deprecated) is refused, saying what it carries.
      const verdict = classifyAddress(inner.v4.toString());
      return { ...verdict, ok: false, range: metadata ? 'metadata' : `ipv4Compatible(${verdict.range})` };
    }
  }
  const family = addr.kind() === 'ipv4' ? 4 : 6;
  const text = addr.toString();
  if (metadata) return { ok: false, address: text, family, range: 'metadata' };
  const range = addr.range();
  return { ok: range === 'unicast', address: text, family, range };
}
