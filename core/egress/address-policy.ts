import ipaddr from 'ipaddr.js';

// Which addresses the gateway may connect to on a caller's behalf. Only globally routable
// unicast passes: ipaddr.js names every special-purpose range (private, loopback, link-local,
// unique-local, CGNAT, multicast, broadcast, unspecified, reserved, documentation, NAT64,
// 6to4, Teredo…), so anything that is not plain `unicast` is refused. IPv6 forms that embed
// an IPv4 address (mapped ::ffff:a.b.c.d, the deprecated compatible ::a.b.c.d) are judged by
// the IPv4 address inside, so [::ffff:127.0.0.1] is loopback like 127.0.0.1.

/** Cloud instance metadata endpoints: refused even when private targets are allowed. */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', 'fd00:ec2:0:0:0:0:0:254']);

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
  let addr = ipaddr.parse(raw.replace(/^\[|\]$/g, ''));
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      addr = v6.toIPv4Address();
    } else {
      const parts = v6.parts;
      // ::a.b.c.d (IPv4-compatible, deprecated): the first 96 bits are zero.
      if (parts.slice(0, 6).every((p) => p === 0) && (parts[6] !== 0 || parts[7] > 1)) {
        const v4 = ipaddr.fromByteArray(v6.toByteArray().slice(12)) as ipaddr.IPv4;
        const inner = classifyAddress(v4.toString());
        return { ...inner, ok: false, range: `ipv4Compatible(${inner.range})` };
      }
    }
  }
  const address = addr.toNormalizedString();
  const family = addr.kind() === 'ipv4' ? 4 : 6;
  const text = addr.toString();
  if (METADATA.has(text) || METADATA.has(address)) return { ok: false, address: text, family, range: 'metadata' };
  const range = addr.range();
  return { ok: range === 'unicast', address: text, family, range };
}
