import { gunzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError, base62, now, type Svc } from '../../core/kit/area.js';
import type { AnalyticsConfigT } from './config.js';
import { eventRows, identify, storeEvents, type IncomingEvent } from './events.js';
import { PublicKey } from './schemas.js';

// PostHog's capture wire (posthog-node, posthog-js) with `host` set to
// <public_url>/v1/analytics/posthog: batches of events, gzip or not, authorised by the account's
// public write-only key (`phc_…`, in the body as PostHog sends it), never the project key. The
// capture paths answer CORS preflights from any origin, as PostHog's do.

export const CAPTURE_BASE = '/v1/analytics/posthog';
/** Paths posthog-node and posthog-js post to, with the discovery id of each. */
// Without their trailing slash: the router ignores it (ignoreTrailingSlash), and the OpenAPI
// document names each path once.
const CAPTURE_PATHS: Record<string, string> = {
  '/batch': 'analytics.posthog_batch',
  '/capture': 'analytics.posthog_capture',
  '/i/v0/e': 'analytics.posthog_e',
  '/e': 'analytics.posthog_e_legacy',
};

/** The account of a public key; keys never change once made, so a hit is kept. */
class PublicKeys {
  private readonly byKey = new Map<string, string>();
  constructor(private readonly svc: Svc) {}

  async forAccount(accountId: string): Promise<string> {
    await this.svc.db
      .insertInto('analytics_public_keys')
      .values({ account_id: accountId, public_key: `phc_${base62(43)}`, created_at: now() })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
    const row = await this.svc.db
      .selectFrom('analytics_public_keys')
      .select('public_key')
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return row.public_key;
  }

  async account(key: string): Promise<string | undefined> {
    const hit = this.byKey.get(key);
    if (hit) return hit;
    const row = await this.svc.db
      .selectFrom('analytics_public_keys')
      .select('account_id')
      .where('public_key', '=', key)
      .executeTakeFirst();
    if (row) this.byKey.set(key, row.account_id);
    return row?.account_id;
  }
}

function decode(req: FastifyRequest, raw: Buffer, max: number): any {
  const q = req.query as Record<string, string | undefined>;
  const gzip =
    String(req.headers['content-encoding'] ?? '').includes('gzip')
    || q.compression === 'gzip-js'
    || q.compression === 'gzip'
    || (raw[0] === 0x1f && raw[1] === 0x8b);
  let text: string;
  try {
    text = (gzip ? gunzipSync(raw, { maxOutputLength: max }) : raw).toString('utf8');
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw apiError('payload_too_large', `The body is over ${max} bytes once decompressed.`, {
        details: { max_bytes: max },
      });
    throw apiError('invalid_request', 'The body is not gzip.');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw apiError('invalid_request', 'The body is not JSON.');
  }
}

/** The events of a capture body, each as PostHog writes it, with the body's key. */
function unpack(body: any): { key?: string; events: any[] } {
  const events: any[] = Array.isArray(body) ? body : Array.isArray(body?.batch) ? body.batch : [body];
  const key = body?.api_key ?? body?.token ?? events[0]?.api_key ?? events[0]?.properties?.token;
  return { key: typeof key === 'string' ? key : undefined, events };
}

function toEvent(e: any, i: number): IncomingEvent {
  const distinct = e?.distinct_id ?? e?.properties?.distinct_id;
  if (typeof e?.event !== 'string' || !e.event || typeof distinct !== 'string' || !distinct)
    throw apiError('validation_failed', `batch[${i}] needs an event and a distinct_id.`, { param: `batch[${i}]` });
  const ts = e.timestamp;
  return {
    event: e.event,
    distinct_id: distinct,
    properties: e.properties && typeof e.properties === 'object' ? e.properties : {},
    ...(typeof ts === 'string' ? { timestamp: ts } : {}),
    ...(typeof e.uuid === 'string' && e.uuid ? { uuid: e.uuid } : {}),
  };
}

function allowAnyOrigin(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*');
}

export function registerPosthogCapture(app: FastifyInstance, svc: Svc, cfg: AnalyticsConfigT): void {
  const keys = new PublicKeys(svc);

  app.get(
    '/v1/analytics/public-key',
    {
      config: { scope: 'analytics:read', operation: 'analytics.public_key' },
      schema: {
        summary: "The account's public write-only key for PostHog SDKs, and the host to give them",
        tags: ['analytics'],
        response: { 200: PublicKey },
      },
    },
    async (req) => ({
      public_key: await keys.forAccount(req.principal!.accountId),
      host: `${svc.config.server.public_url.replace(/\/+$/, '')}${CAPTURE_BASE}`,
    })
  );

  // Its own scope: the bodies are bytes (gzip, or JSON sent as text/plain by browsers).
  void app.register(async (sub) => {
    sub.removeAllContentTypeParsers();
    sub.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: cfg.max_capture_bytes }, (_req, body, done) =>
      done(null, body)
    );
    for (const [path, operation] of Object.entries(CAPTURE_PATHS)) {
      sub.options(
        `${CAPTURE_BASE}${path}`,
        {
          config: { auth: 'none', cors: false },
          schema: { summary: 'CORS preflight of the PostHog capture path: any origin', tags: ['analytics'] },
        },
        async (req, reply) => {
          allowAnyOrigin(reply);
          reply.header('access-control-allow-methods', 'POST, OPTIONS');
          reply.header('access-control-allow-headers', req.headers['access-control-request-headers'] ?? 'content-type');
          reply.header('access-control-max-age', '86400');
          return reply.code(204).send();
        }
      );
      sub.post(
        `${CAPTURE_BASE}${path}`,
        {
          config: { auth: 'none', cors: false, operation, errors: ['unauthenticated'] },
          schema: {
            summary: 'PostHog capture (posthog-node, posthog-js): a body of events, gzip or JSON',
            tags: ['analytics'],
          },
        },
        async (req, reply) => {
          allowAnyOrigin(reply);
          const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
          const { key, events } = unpack(decode(req, raw, cfg.max_capture_bytes));
          const accountId = key ? await keys.account(key) : undefined;
          if (!accountId)
            throw apiError(
              'unauthenticated',
              'api_key is not a public key of this gateway (GET /v1/analytics/public-key).'
            );
          const incoming = events.map(toEvent);
          const rows = eventRows(accountId, incoming, cfg, (i) => (i < 0 ? 'batch' : `batch[${i}]`));
          await storeEvents(svc, cfg, accountId, rows, req.id);
          for (const e of incoming) {
            const p = e.properties ?? {};
            if (e.event === '$identify') {
              const anon = typeof p.$anon_distinct_id === 'string' ? p.$anon_distinct_id : undefined;
              const traits = (p.$set && typeof p.$set === 'object' ? p.$set : undefined) as Record<string, unknown>;
              if (anon) await identify(svc.db, accountId, anon, e.distinct_id, traits);
              else await identify(svc.db, accountId, e.distinct_id, undefined, traits);
            } else if (e.event === '$create_alias' && typeof p.alias === 'string')
              await identify(svc.db, accountId, p.alias, e.distinct_id, undefined);
          }
          return { status: 1 };
        }
      );
    }
  });
}
