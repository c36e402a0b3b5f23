import ipaddr from 'ipaddr.js';

// The cloud instance metadata services hand out the machine's credentials: the gateway never
// calls them, whatever its config says (allow_private, allow_hosts, allow_loopback). Judged on
// the parsed address, so every spelling is caught: the WHATWG URL parser already turns
// decimal, hex and octal IPv4 (http://2852039166/, http://0xa9fea9fe/) into dotted quads, and
// IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by it.

/** AWS, Azure, GCP, OCI, DigitalOcean (169.254.169.254), ECS tasks, Alibaba, old OCI; AWS and GCP on IPv6. */
const ADDRESSES = new Set(
  ['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192', 'fd00:ec2::254', 'fd20:ce::254'].map((a) =>
    ipaddr.parse(a).toNormalizedString()
  )
);

/** Names that resolve to a metadata service inside a cloud (so DNS need not be asked). */
const NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);

export type Embedding = 'mapped' | 'compatible' | 'nat64' | '6to4';

/** The IPv4 address an IPv6 address carries, and how: mapped, compatible, NAT64 (64:ff9b::/96) or 6to4 (2002::/16). */
export function embeddedIPv4(v6: ipaddr.IPv6): { v4: ipaddr.IPv4; form: Embedding } | undefined {
  const bytes = v6.toByteArray();
  const p = v6.parts;
  const last32 = () => ipaddr.fromByteArray(bytes.slice(12)) as ipaddr.IPv4;
  if (v6.isIPv4MappedAddress()) return { v4: v6.toIPv4Address(), form: 'mapped' };
  // ::a.b.c.d, but not :: and ::1.
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7] > 1)) return { v4: last32(), form: 'compatible' };
  if (p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((x) => x === 0)) return { v4: last32(), form: 'nat64' };
  if (p[0] === 0x2002) return { v4: ipaddr.fromByteArray(bytes.slice(2, 6)) as ipaddr.IPv4, form: '6to4' };
  return undefined;
}

/** Whether an address (any textual form ipaddr.js parses) is a metadata service's. */
export function isMetadataAddress(raw: string): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(raw.replace(/^\[|\]$/g, ''));
  } catch {
    return false;
  }
  if (addr.kind() === 'ipv6') {
    const inner = embeddedIPv4(addr as ipaddr.IPv6);
    if (inner) return ADDRESSES.has(inner.v4.toNormalizedString());
  }
  return ADDRESSES.has(addr.toNormalizedString());
}

/** Whether a host name is a metadata service's well-known name (any case, trailing dot or not). */
export function isMetadataName(host: string): boolean {
  return NAMES.has(host.toLowerCase().replace(/\.$/, ''));
}
