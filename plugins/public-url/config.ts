import { Type, type Static } from '@sinclair/typebox';

const MIB = 1024 ** 2;

const TierLimits = Type.Object(
  {
    max_tunnels: Type.Integer({ minimum: 0, description: 'Tunnels connected at once.' }),
    bytes_per_second: Type.Integer({
      minimum: 1024,
      description: "Bytes a second through all of the account's tunnels, both ways together.",
    }),
  },
  { additionalProperties: false }
);

/** `plugins.public-url` in the config file. */
export const PublicUrlConfig = Type.Object(
  {
    tunnel_domain: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$',
      default: 'localhost',
      description:
        'Tunnels answer at {subdomain}.{tunnel_domain}; point a wildcard DNS record at the gateway. '
        + 'The default, localhost, works on a laptop with no DNS (*.localhost is loopback).',
    }),
    url_template: Type.String({
      default: '',
      pattern: '^$|\\{subdomain\\}',
      description:
        'The `url` a record hands out, e.g. "https://{subdomain}.tunnels.example.com" behind a TLS proxy; '
        + "empty: server.public_url's scheme and port on {subdomain}.{tunnel_domain}.",
    }),
    default_ttl_seconds: Type.Integer({ minimum: 60, maximum: 604800, default: 28800 }),
    window_bytes: Type.Integer({
      minimum: 16384,
      maximum: 16 * MIB,
      default: 256 * 1024,
      description: 'Flow-control window of one stream in a tunnel: bytes sent before the peer grants more.',
    }),
    tier_limits: Type.Record(Type.String(), TierLimits, {
      default: {
        free: { max_tunnels: 2, bytes_per_second: 10 * MIB },
        pro: { max_tunnels: 20, bytes_per_second: 100 * MIB },
      },
      description: 'Per account tier; a tier not listed gets the smallest listed.',
    }),
    anonymous: Type.Object(
      {
        enabled: Type.Boolean({ default: true, description: 'POST /v1/public-url/anonymous without a key.' }),
        max_ttl_seconds: Type.Integer({ minimum: 60, maximum: 604800, default: 7200 }),
        max_bytes: Type.Integer({
          minimum: 0,
          default: 1024 * MIB,
          description: 'Bytes one anonymous tunnel carries.',
        }),
        bytes_per_second: Type.Integer({ minimum: 1024, default: 5 * MIB }),
        per_ip_per_hour: Type.Integer({ minimum: 1, default: 10 }),
      },
      { additionalProperties: false, default: {} }
    ),
    price_per_gib_usd: Type.Number({
      minimum: 0,
      default: 0.05,
      description: "Charged to the account's wallet for bytes through its tunnels, both ways.",
    }),
    billing_interval_seconds: Type.Integer({ minimum: 1, default: 60 }),
    node_url: Type.String({
      default: '',
      pattern: '^$|^https?://',
      description:
        "This node's address for the gateway's other nodes (http://10.0.0.5:8787), which forward the requests of "
        + "tunnels connected here; empty: the local address and port the tunnel client's connection arrived on.",
    }),
    dns_servers: Type.Array(Type.String(), {
      default: [],
      description: 'DNS servers (`ip` or `ip:port`) asked for custom domain TXT records; empty: the system resolvers.',
    }),
  },
  { additionalProperties: false, default: {} }
);

export type PublicUrlConfigT = Static<typeof PublicUrlConfig>;
export type TierLimitsT = Static<typeof TierLimits>;
