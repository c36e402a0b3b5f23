import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../errors.js';
import { scopeAllows } from '../auth/scopes.js';

/** The key from `Authorization: Bearer …` or `x-api-key`. */
export function presentedKey(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (h) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
    return m ? m[1] : undefined;
  }
  const x = req.headers['x-api-key'];
  return typeof x === 'string' && x ? x.trim() : undefined;
}

function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

function setRateHeaders(reply: FastifyReply, d: { limit: number; remaining: number; resetSeconds: number; policy: string }) {
  reply.header('ratelimit-limit', d.limit);
  reply.header('ratelimit-remaining', d.remaining);
  reply.header('ratelimit-reset', d.resetSeconds);
  reply.header('ratelimit-policy', d.policy);
}

/**
 * Authenticates every route by its `config.auth` (default: a project key for /v1 paths),
 * checks the scope, and spends one token of the key's rate bucket.
 */
export function installAuth(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    const cfg = req.routeOptions.config ?? {};
    const mode = cfg.auth ?? (req.routeOptions.url?.startsWith('/v1/') ? 'key' : 'none');
    if (mode === 'none') return;
    const svc = app.svc;
    const presented = presentedKey(req);
    if (mode === 'admin') {
      const admin = svc.config.admin_key;
      if (!admin) throw apiError('not_found', 'The admin API is off: set admin_key (SVC_ADMIN_KEY) in the config to turn it on.');
      if (!presented || !sameSecret(presented, admin)) throw apiError('unauthenticated', 'This endpoint needs the operator admin key.');
      return;
    }
    if (!presented) throw apiError('unauthenticated', 'No API key. Send it as "Authorization: Bearer <API_KEY>" (or x-api-key). POST /v1/activate creates one.');
    const principal = await svc.keys.lookup(presented);
    if (!principal) throw apiError('unauthenticated', 'The API key is unknown, revoked or expired.');
    if (principal.status !== 'active') throw apiError('forbidden', 'This account is suspended.');
    req.principal = principal;
    const tier = svc.config.tiers[principal.tier] ?? svc.config.tiers[svc.config.default_tier];
    const d = await svc.rateLimits.take(principal.keyId, tier);
    setRateHeaders(reply, d);
    if (!d.allowed) {
      throw apiError('rate_limited', `Over the ${principal.tier} tier's rate of ${tier.rate_per_minute} requests a minute (burst ${tier.burst}). Retry in ${d.retryAfterSeconds} s, or upgrade with POST /v1/account/tier/upgrade.`, {
        headers: { 'retry-after': String(d.retryAfterSeconds) },
      });
    }
    if (!scopeAllows(principal.scopes, cfg.scope)) throw apiError('forbidden', `This key's scopes (${principal.scopes.join(', ')}) do not include "${cfg.scope}".`);
  });
}
