// Headers that belong to one connection (RFC 9110 §7.6.1) are not forwarded through a tunnel,
// nor any header the Connection header names. An upgrade keeps Upgrade and Connection: upgrade.

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** rawHeaders ([name, value, …]) without hop-by-hop ones; `keepUpgrade` for an upgrade request or 101. */
export function endToEnd(raw: string[], keepUpgrade = false): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i].toLowerCase() === 'connection') for (const t of raw[i + 1].split(',')) named.add(t.trim().toLowerCase());
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (keepUpgrade && name === 'upgrade') {
      out.push(raw[i], raw[i + 1]);
      continue;
    }
    if (HOP_BY_HOP.has(name) || (named.has(name) && !(keepUpgrade && name === 'upgrade'))) continue;
    out.push(raw[i], raw[i + 1]);
  }
  if (keepUpgrade) out.push('Connection', 'Upgrade');
  return out;
}

/** The request's headers for the local app: end-to-end ones, then x-forwarded-for/proto/host set by the gateway. */
export function forwardedHeaders(
  raw: string[],
  remote: string | undefined,
  proto: string,
  host: string,
  upgrade: boolean
): string[] {
  const out: string[] = [];
  let forwardedFor: string | undefined;
  const kept = endToEnd(raw, upgrade);
  for (let i = 0; i < kept.length; i += 2) {
    const name = kept[i].toLowerCase();
    if (name === 'x-forwarded-for') forwardedFor = forwardedFor ? `${forwardedFor}, ${kept[i + 1]}` : kept[i + 1];
    else if (name !== 'x-forwarded-proto' && name !== 'x-forwarded-host') out.push(kept[i], kept[i + 1]);
  }
  const chain = [forwardedFor, remote].filter(Boolean).join(', ');
  if (chain) out.push('X-Forwarded-For', chain);
  out.push('X-Forwarded-Proto', proto, 'X-Forwarded-Host', host);
  return out;
}

/** rawHeaders as an object for http.request/writeHead: repeated names joined (set-cookie kept a list). */
export function headerObject(raw: string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    const prev = out[name];
    if (prev === undefined) out[name] = raw[i + 1];
    else if (name === 'set-cookie') out[name] = [...(Array.isArray(prev) ? prev : [prev]), raw[i + 1]];
    else out[name] = `${prev}, ${raw[i + 1]}`;
  }
  return out;
}
