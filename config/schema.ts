import { Type, type Static } from '@sinclair/typebox';

// The core part of the config file. Areas and vendors add their own schemas
// (plugins.<area> and vendors[].config), composed and validated in config/load.ts.

export const TierSchema = Type.Object(
  {
    rate_per_minute: Type.Integer({
      minimum: 1,
      default: 60,
      description: 'Requests a minute per key (token bucket refill).',
    }),
    burst: Type.Integer({ minimum: 1, default: 20, description: 'Bucket size: requests allowed at once.' }),
    price_usd: Type.Number({ minimum: 0, default: 0, description: 'Debited from the wallet on upgrade to this tier.' }),
  },
  { additionalProperties: false }
);

export const VendorInstanceSchema = Type.Object(
  {
    id: Type.String({
      pattern: '^[a-z0-9][a-z0-9_-]{0,62}$',
      description: 'Instance id, used in routes, pins and x-svc-vendor.',
    }),
    use: Type.String({ minLength: 1, description: 'Built-in adapter name or npm package name.' }),
    config: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
    regions: Type.Optional(Type.Array(Type.String(), { description: 'Overrides the regions the adapter declares.' })),
  },
  { additionalProperties: false }
);

export const RouteSchema = Type.Object(
  {
    strategy: Type.Union([Type.Literal('fallback'), Type.Literal('cheapest')], { default: 'fallback' }),
    targets: Type.Array(Type.String(), { minItems: 1 }),
  },
  { additionalProperties: false }
);

export const CoreConfigSchema = Type.Object(
  {
    version: Type.Literal(1, { default: 1 }),
    server: Type.Object(
      {
        host: Type.String({ default: '127.0.0.1' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 8787 }),
        public_url: Type.String({
          default: '',
          description: 'Base of every URL handed out; defaults to http://HOST:PORT.',
        }),
        trust_proxy: Type.Boolean({ default: false, description: 'Take the client IP from x-forwarded-for.' }),
        shutdown_grace_ms: Type.Integer({ minimum: 0, default: 10000 }),
        idle_gc_seconds: Type.Number({
          minimum: 0,
          default: 10,
          description:
            'After this long with a quiet event loop and garbage to spare, one full collection gives memory back '
            + '(0: off). Needs node --expose-gc, which the CLI and npm start pass.',
        }),
        cors: Type.Object(
          {
            origins: Type.Array(
              Type.String({ pattern: '^(\\*|[a-z][a-z0-9+.-]*://[^/*]+|[a-z][a-z0-9+.-]*://[^/*]*\\*[^/*]*)$' }),
              {
                default: [],
                description:
                  'Browser origins allowed to call the API: `scheme://host[:port]`, no path, at most one `*` wildcard (`https://*.example.com`, `*`). None by default.',
              }
            ),
            max_age_seconds: Type.Integer({
              minimum: 0,
              default: 600,
              description: 'How long a browser may cache a preflight answer.',
            }),
          },
          { additionalProperties: false, default: {} }
        ),
      },
      { additionalProperties: false, default: {} }
    ),
    data_dir: Type.String({ default: './.svc' }),
    database: Type.Object(
      {
        url: Type.String({
          default: '',
          description: 'sqlite:PATH or postgres://…; default sqlite:<data_dir>/gateway.db',
        }),
        pool_size: Type.Integer({ minimum: 1, default: 10 }),
      },
      { additionalProperties: false, default: {} }
    ),
    redis: Type.Object(
      {
        url: Type.String({ default: '' }),
      },
      { additionalProperties: false, default: {} }
    ),
    admin_key: Type.String({
      default: '',
      description: 'Operator key for /v1/admin/*; empty turns the admin API off.',
    }),
    master_key: Type.String({
      default: '',
      description: 'Encrypts BYOK secrets and signs tokens; generated into data_dir when empty.',
    }),
    log: Type.Object(
      {
        level: Type.Union(
          ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
          { default: 'info' }
        ),
        requests: Type.Union([Type.Literal('auto'), Type.Boolean()], {
          default: 'auto',
          description:
            'A line per request (at info); auto: only when stdout is not a terminal, where they bury the banner.',
        }),
      },
      { additionalProperties: false, default: {} }
    ),
    egress: Type.Object(
      {
        allow_private: Type.Boolean({
          default: false,
          description: 'Allow private, loopback and link-local targets (tests, trusted networks).',
        }),
        allow_hosts: Type.Array(Type.String(), {
          default: [],
          description:
            'Host names allowed even when they resolve to private addresses (never the cloud metadata service).',
        }),
        allow_loopback: Type.Union([Type.Literal('auto'), Type.Boolean()], {
          default: 'auto',
          description:
            'Allow loopback targets (a receiver on this machine); auto: only when server.host is loopback, '
            + 'trust_proxy is off and public_url (when set) is loopback.',
        }),
        timeout_ms: Type.Integer({ minimum: 1, default: 30000 }),
        max_bytes: Type.Integer({ minimum: 1, default: 26214400 }),
        max_redirects: Type.Integer({ minimum: 0, default: 5 }),
      },
      { additionalProperties: false, default: {} }
    ),
    jobs: Type.Object(
      {
        poll_ms: Type.Integer({
          minimum: 10,
          default: 200,
          description:
            'How often an idle node looks for due jobs, expired leases and jobs other nodes enqueued (on SQLite, the only node: expired leases).',
        }),
        lease_ms: Type.Integer({
          minimum: 100,
          default: 30000,
          description: 'How long a claimed job stays locked; renewed while it runs, claimable again after a crash.',
        }),
        concurrency: Type.Integer({
          minimum: 1,
          default: 16,
          description: 'Jobs of one kind a node runs at once, unless the kind sets its own.',
        }),
        stop_grace_ms: Type.Integer({
          minimum: 0,
          default: 5000,
          description: 'On shutdown, how long running jobs may finish before they are released.',
        }),
        done_retention_seconds: Type.Integer({
          minimum: 0,
          default: 3600,
          description: 'Finished jobs are deleted after this long (dead ones are kept).',
        }),
      },
      { additionalProperties: false, default: {} }
    ),
    retention: Type.Object(
      {
        ledger_days: Type.Integer({
          minimum: 0,
          default: 90,
          description:
            'Wallet usage entries older than this are rolled up into daily totals and deleted; 0 keeps them.',
        }),
        deliveries_days: Type.Integer({
          minimum: 0,
          default: 30,
          description:
            'Finished webhook deliveries, finished cron runs and attempts older than this are deleted; 0 keeps them.',
        }),
        jobs_days: Type.Integer({
          minimum: 0,
          default: 7,
          description: 'Finished and dead jobs older than this are deleted; 0 keeps them.',
        }),
        interval_seconds: Type.Integer({
          minimum: 60,
          default: 3600,
          description: 'How often the retention job runs (one node runs each round).',
        }),
      },
      { additionalProperties: false, default: {} }
    ),
    wallet: Type.Object(
      {
        trial_credit_usd: Type.Number({ minimum: 0, default: 5 }),
        markup: Type.Number({ minimum: 0, default: 1.0, description: 'Multiplier on vendor prices.' }),
        currency: Type.String({ default: 'USD' }),
        topup_min_usd: Type.Number({ minimum: 0, default: 5 }),
        topup_max_usd: Type.Number({ minimum: 0, default: 10000 }),
        hold_grace_seconds: Type.Integer({
          minimum: 1,
          default: 60,
          description:
            "A call's hold is given back this long after the call's deadline if nothing settled it (its node died).",
        }),
        hold_sweep_seconds: Type.Integer({
          minimum: 1,
          default: 60,
          description: 'How often a live node gives back holds past their expiry.',
        }),
      },
      { additionalProperties: false, default: {} }
    ),
    default_tier: Type.String({ default: 'free' }),
    tiers: Type.Record(Type.String({ pattern: '^[a-z0-9_-]+$' }), TierSchema, {
      default: {
        free: { rate_per_minute: 60, burst: 20, price_usd: 0 },
        pro: { rate_per_minute: 600, burst: 100, price_usd: 20 },
      },
    }),
    limits: Type.Object(
      {
        body_bytes: Type.Integer({ minimum: 1024, default: 1048576 }),
        large_body_bytes: Type.Integer({ minimum: 1024, default: 26214400 }),
        activate_per_hour: Type.Integer({
          minimum: 1,
          default: 5,
          description: 'Activations a client IP may make an hour.',
        }),
        key_rotation_grace_seconds: Type.Integer({ minimum: 0, default: 86400 }),
        idempotency_ttl_seconds: Type.Integer({ minimum: 60, default: 86400 }),
        idempotency_lease_seconds: Type.Integer({
          minimum: 1,
          default: 30,
          description:
            "A running request's claim on its idempotency key lapses this long after its last renewal or its call's deadline; then a retry takes it over.",
        }),
        topup_ttl_seconds: Type.Integer({ minimum: 60, default: 86400 }),
      },
      { additionalProperties: false, default: {} }
    ),
    plugins: Type.Record(Type.String(), Type.Union([Type.Boolean(), Type.Record(Type.String(), Type.Unknown())]), {
      default: {},
    }),
    vendors: Type.Array(VendorInstanceSchema, { default: [] }),
    routes: Type.Record(Type.String(), RouteSchema, { default: {} }),
  },
  { additionalProperties: false }
);

export type CoreConfig = Static<typeof CoreConfigSchema>;
export type TierConfig = Static<typeof TierSchema>;
export type VendorInstanceConfig = Static<typeof VendorInstanceSchema>;
