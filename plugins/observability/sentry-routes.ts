import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { allowAnyOrigin, answerPreflight, apiError, type Svc } from '../../core/kit/area.js';
import type { ObservabilityConfigT } from './config.js';
import type { IssueStore } from './issues.js';
import type { PublicKeys } from './public-keys.js';
import { parseEnvelope, sentryError } from './sentry-envelope.js';

// Sentry SDKs as error clients (wire-facts "Sentry envelopes"): the account's DSN names its
// public key and numeric project; SDKs post envelopes to /api/{project}/envelope/, with the
// key in the query (`sentry_key`) or in X-Sentry-Auth, gzip or not, and back off on 429 with
// Retry-After. Only `event` items are kept (errors and messages, into the same issues as
// POST /v1/observability/errors); sessions, transactions, client reports and the rest are
// accepted and dropped, as the protocol asks of a server that does not handle them.

const unzip = { gzip: promisify(gunzip), deflate: promisify(inflate) };

export const SentryDsn = Type.Object({
  dsn: Type.String({ description: 'Give it to Sentry.init({ dsn }); it carries the public key only.' }),
  public_key: Type.String({ description: 'Write-only: it can add errors to this account and nothing else.' }),
  project_id: Type.String({ description: "The DSN's numeric project id." }),
  envelope_url: Type.String(),
});

function sentryKey(req: FastifyRequest<{ Querystring: Record<string, string> }>): string | undefined {
  const q = req.query.sentry_key;
  if (typeof q === 'string' && q) return q;
  const h = req.headers['x-sentry-auth'] ?? req.headers.authorization;
  const m = typeof h === 'string' ? /\bsentry_key=([^,\s]+)/.exec(h) : null;
  return m?.[1];
}

async function decoded(req: FastifyRequest, maxBytes: number): Promise<Buffer> {
  const raw = req.body as Buffer | undefined;
  if (!raw || !Buffer.isBuffer(raw) || raw.length === 0) throw apiError('invalid_request', 'The envelope is empty.');
  const enc = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (enc === 'identity' || enc === '') return raw;
  if (enc !== 'gzip' && enc !== 'deflate')
    throw apiError('unsupported_media_type', `Content-Encoding ${enc} is not accepted: send gzip, deflate or none.`);
  try {
    return await unzip[enc](raw, { maxOutputLength: maxBytes });
  } catch (e: any) {
    if (e?.code === 'ERR_BUFFER_TOO_LARGE')
      throw apiError('payload_too_large', `The envelope is over ${maxBytes} bytes once decompressed.`);
    throw apiError('invalid_request', `The body is not valid ${enc} data.`);
  }
}

export function registerSentryRoutes(
  app: FastifyInstance,
  svc: Svc,
  cfg: ObservabilityConfigT,
  keys: PublicKeys,
  issues: IssueStore
): void {
  const base = () => new URL(svc.config.server.public_url);

  app.get(
    '/v1/observability/sentry-dsn',
    {
      config: { scope: 'observability:read', operation: 'observability.sentry_dsn' },
      schema: {
        summary: "The account's Sentry DSN, for Sentry SDKs (a public, write-only key)",
        tags: ['observability'],
        response: { 200: SentryDsn },
      },
    },
    async (req) => {
      const k = await keys.forAccount(req.principal!.accountId);
      const u = base();
      const path = u.pathname.replace(/\/+$/, '');
      return {
        dsn: `${u.protocol}//${k.public_key}@${u.host}${path}/${k.sentry_project}`,
        public_key: k.public_key,
        project_id: k.sentry_project,
        envelope_url: `${u.origin}${path}/api/${k.sentry_project}/envelope/`,
      };
    }
  );

  // Its own scope: envelopes come with no content type, text/plain or application/x-sentry-envelope,
  // and are read as bytes whatever they say.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: cfg.max_envelope_bytes }, (_r, body, done) =>
      done(null, body)
    );
    const url = '/api/:project_id/envelope/';
    const params = Type.Object({ project_id: Type.String() });
    scope.options(url, { config: { auth: 'none', cors: false } as any, schema: { hide: true } as any }, (req, reply) =>
      answerPreflight(req, reply, 'POST')
    );
    scope.post(
      url,
      {
        config: { auth: 'none', cors: false } as any,
        bodyLimit: cfg.max_envelope_bytes,
        // Sentry's wire, not the gateway's (as the S3 endpoint): out of discovery and OpenAPI, in docs/observability.md.
        schema: { hide: true, params } as any,
      },
      async (req: FastifyRequest<{ Params: { project_id: string }; Querystring: Record<string, string> }>, reply) => {
        allowAnyOrigin(reply);
        const key = sentryKey(req);
        const acct = key ? await keys.lookup(key) : null;
        if (!acct || acct.sentryProject !== req.params.project_id)
          throw apiError(
            'unauthenticated',
            'Unknown Sentry key for this project: copy the DSN from GET /v1/observability/sentry-dsn.'
          );
        if (acct.status !== 'active') throw apiError('forbidden', 'This account is suspended.');
        await overTier(svc, acct.accountId, acct.tier);
        const env = parseEnvelope(await decoded(req, cfg.max_envelope_bytes));
        const errors = env.items.filter((i) => i.type === 'event').map((i) => sentryError(i.payload));
        for (const e of errors) await issues.record(acct.accountId, { ...e, source: 'sentry' });
        const id = typeof env.header.event_id === 'string' ? env.header.event_id : null;
        return { id };
      }
    );
  });
}

/** The account's tier rate, in a bucket of its own: errors a page sends never spend its API calls. */
async function overTier(svc: Svc, accountId: string, tierName: string) {
  const tier = svc.config.tiers[tierName] ?? svc.config.tiers[svc.config.default_tier];
  const d = await svc.rateLimits.take(`sentry:${accountId}`, tier);
  if (!d.allowed)
    throw apiError(
      'rate_limited',
      `Over the ${tierName} tier's ingest rate of ${tier.rate_per_minute} envelopes a minute.`,
      {
        headers: {
          'retry-after': String(d.retryAfterSeconds),
          'x-sentry-rate-limits': `${d.retryAfterSeconds}::organization`,
        },
      }
    );
}
