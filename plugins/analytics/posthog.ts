import type { FastifyInstance } from 'fastify';
import { allowAnyOrigin, answerPreflight, apiError, type Svc } from '../../core/kit/area.js';
import { takeCapture } from './capture-limit.js';
import type { AnalyticsConfigT } from './config.js';
import { eventRows, identify, storeEvents, type IncomingEvent } from './events.js';
import { PublicKey } from './schemas.js';
import { decodeBody } from './posthog-body.js';
import { registerPosthogFlags } from './posthog-flags.js';
import { PosthogKeys } from './posthog-keys.js';

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

export function registerPosthogCapture(app: FastifyInstance, svc: Svc, cfg: AnalyticsConfigT): void {
  const keys = new PosthogKeys(svc);

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
        async (req, reply) => answerPreflight(req, reply, 'POST, OPTIONS')
      );
      sub.post(
        `${CAPTURE_BASE}${path}`,
        {
          config: { auth: 'none', cors: false, operation, errors: ['unauthenticated', 'forbidden', 'rate_limited'] },
          schema: {
            summary: 'PostHog capture (posthog-node, posthog-js): a body of events, gzip or JSON',
            tags: ['analytics'],
          },
        },
        async (req, reply) => {
          allowAnyOrigin(reply);
          const { key, events } = unpack(decodeBody(req, cfg.max_capture_bytes));
          const acct = await keys.admit(key, 'api_key');
          await takeCapture(svc, cfg, acct.accountId, acct.tier);
          const accountId = acct.accountId;
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
    registerPosthogFlags(sub, svc, cfg, keys);
  });
}
